//! `Generator`: a fiber seen as an iterator.

use fibra::Generator;
use fibra::fiber::Builder;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;

struct Flag(Rc<Cell<bool>>);
impl Drop for Flag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

#[test]
fn a_generator_is_an_iterator() {
    let squares = Generator::new(|out| {
        for i in 1..=5u32 {
            out.suspend(i * i);
        }
    });
    let v: Vec<u32> = squares.filter(|n| n % 2 == 1).collect();
    assert_eq!(v, [1, 9, 25]);
}

#[test]
fn a_finished_generator_stays_finished() {
    let mut g = Generator::new(|out| out.suspend("only"));
    assert_eq!(g.next(), Some("only"));
    assert_eq!(g.next(), None);
    assert_eq!(g.next(), None);
}

#[test]
fn dropping_a_generator_early_drops_what_it_holds() {
    let dropped = Rc::new(Cell::new(false));
    let flag = Flag(dropped.clone());
    let mut g = Generator::new(move |out| {
        let _held = flag;
        for i in 0.. {
            out.suspend(i);
        }
    });
    assert_eq!(g.next(), Some(0));
    assert_eq!(g.next(), Some(1));
    assert!(!dropped.get());
    drop(g);
    assert!(dropped.get());
}

#[test]
fn a_tree_walk_becomes_a_lazy_iterator() {
    enum Tree {
        Leaf(u32),
        Node(Box<Tree>, Box<Tree>),
    }
    fn walk(t: &Tree, out: &fibra::Yielder<(), u32, ()>) {
        match t {
            Tree::Leaf(v) => out.suspend(*v),
            Tree::Node(l, r) => {
                walk(l, out);
                walk(r, out);
            }
        }
    }
    let tree = Tree::Node(
        Box::new(Tree::Node(Box::new(Tree::Leaf(1)), Box::new(Tree::Leaf(2)))),
        Box::new(Tree::Leaf(3)),
    );
    let g = Generator::with_builder(Builder::new().stack_size(32 * 1024), move |out| {
        walk(&tree, out)
    })
    .unwrap();
    assert_eq!(g.collect::<Vec<_>>(), [1, 2, 3]);
}

#[test]
fn a_panic_in_a_generator_reaches_next_and_ends_it() {
    let mut g = Generator::new(|out| {
        out.suspend(1);
        panic!("generator failed");
    });
    assert_eq!(g.next(), Some(1));
    let err = panic::catch_unwind(AssertUnwindSafe(|| g.next())).unwrap_err();
    assert_eq!(err.downcast_ref::<&str>(), Some(&"generator failed"));
    assert_eq!(g.next(), None);
}
