//! A chat server: a green thread per client, all on one OS thread, over
//! [`fibra::net`] TCP. Each client's reader sends what it says through a
//! channel to a broadcaster green thread, which passes every line on to the
//! other clients' channels; a writer green thread per client drains its own.
//! A client that falls [`BACKLOG`] lines behind is hung up on, so one slow
//! reader cannot hold up the room.
//!
//! ```sh
//! cargo run -p fibra --example chat_server            # serves 127.0.0.1:7878 until Ctrl-C
//! nc 127.0.0.1 7878                                   # in two or more terminals
//! cargo run -p fibra --example chat_server -- --demo  # three scripted clients, then exits
//! ```

use fibra::net::{TcpListener, TcpStream};
use fibra::sync::channel::{self, Receiver, Sender};
use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr};
use std::rc::Rc;

const ADDR: &str = "127.0.0.1:7878";
/// How many lines a client may fall behind before it is hung up on.
const BACKLOG: usize = 256;

/// What the clients tell the broadcaster.
enum Event {
    Joined { id: u64, outbox: Sender<Rc<str>> },
    Said { id: u64, line: String },
    Left { id: u64 },
}

fn main() -> io::Result<()> {
    let demo = std::env::args().any(|arg| arg == "--demo");
    fibra::run(move || {
        if demo {
            return self::demo().map(|transcripts| {
                for (n, lines) in transcripts.iter().enumerate() {
                    println!("client {} heard: {lines:?}", n + 1);
                }
            });
        }
        let listener = TcpListener::bind(ADDR)?;
        println!("chat: listening on {ADDR}; connect with `nc 127.0.0.1 7878`");
        serve(listener)
    })
}

/// Starts the broadcaster, then accepts clients for ever, a green thread each.
fn serve(listener: TcpListener) -> io::Result<()> {
    let (events, inbox) = channel::unbounded();
    fibra::spawn(move || broadcast(inbox));
    for id in 1.. {
        match listener.accept() {
            Ok((stream, _)) => {
                let events = events.clone();
                fibra::spawn(move || client(id, stream, events));
            }
            Err(e) => eprintln!("chat: accept: {e}"),
        }
    }
    Ok(())
}

/// Passes every event on to every client but the one it came from.
fn broadcast(inbox: Receiver<Event>) {
    let mut clients: HashMap<u64, Sender<Rc<str>>> = HashMap::new();
    for event in inbox {
        let (from, text) = match event {
            Event::Joined { id, outbox } => {
                let _ = outbox.try_send(format!("* welcome, user{id}\n").into());
                clients.insert(id, outbox);
                (id, format!("* user{id} joined\n"))
            }
            Event::Said { id, line } => (id, format!("user{id}: {line}\n")),
            Event::Left { id } => {
                clients.remove(&id);
                (id, format!("* user{id} left\n"))
            }
        };
        let text: Rc<str> = text.into();
        // A client whose channel is full (BACKLOG lines behind) or gone is
        // dropped: its writer then drains what it has and hangs up.
        clients.retain(|&id, outbox| id == from || outbox.try_send(text.clone()).is_ok());
    }
}

/// One client: this green thread reads its lines, a second one writes what
/// the broadcaster sends it.
fn client(id: u64, stream: TcpStream, events: Sender<Event>) {
    let stream = Rc::new(stream);
    let (outbox, lines) = channel::bounded::<Rc<str>>(BACKLOG);
    if events.send(Event::Joined { id, outbox }).is_err() {
        return;
    }
    let writer = fibra::spawn({
        let stream = stream.clone();
        move || {
            for text in lines {
                if (&*stream).write_all(text.as_bytes()).is_err() {
                    break;
                }
            }
            // Dropped by the broadcaster: hang up, which ends the reader too.
            let _ = stream.shutdown(Shutdown::Both);
        }
    });
    for line in BufReader::new(&*stream).lines() {
        let Ok(line) = line else { break };
        let _ = events.send(Event::Said { id, line });
    }
    let _ = events.send(Event::Left { id });
    let _ = writer.join();
}

/// Serves on a free port and runs three scripted clients: each joins, says
/// one line, and reads until it has heard the other two. Returns what each
/// heard (joins and lines), in order.
fn demo() -> io::Result<Vec<Vec<String>>> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    fibra::spawn(move || serve(listener));
    // Join one at a time, each welcomed before the next connects.
    let clients = (0..3)
        .map(|_| ScriptedClient::join(addr))
        .collect::<io::Result<Vec<_>>>()?;
    for (client, greeting) in clients.iter().zip(["hello", "hi", "hey"]) {
        client.say(greeting)?;
    }
    // The server is cancelled when this, the runtime's first green thread, returns.
    clients
        .into_iter()
        .map(|client| client.hear_lines_from_others(2))
        .collect()
}

/// A client of the demo, on a green thread of the same runtime as the server.
struct ScriptedClient {
    reader: BufReader<TcpStream>,
}

impl ScriptedClient {
    fn join(addr: SocketAddr) -> io::Result<ScriptedClient> {
        let mut reader = BufReader::new(TcpStream::connect(addr)?);
        let mut welcome = String::new();
        reader.read_line(&mut welcome)?;
        assert!(welcome.starts_with("* welcome"), "{welcome:?}");
        Ok(ScriptedClient { reader })
    }

    fn say(&self, line: &str) -> io::Result<()> {
        writeln!(self.reader.get_ref(), "{line}")
    }

    /// Reads until `lines` lines said by others have come (notices, which
    /// start with `*`, do not count); returns all it read.
    fn hear_lines_from_others(mut self, lines: usize) -> io::Result<Vec<String>> {
        let mut heard: Vec<String> = Vec::new();
        while heard.iter().filter(|l| !l.starts_with('*')).count() < lines {
            let mut line = String::new();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            heard.push(line.trim_end().to_string());
        }
        Ok(heard)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn three_clients_hear_each_other() {
        let transcripts = fibra::run(super::demo).expect("the demo runs");
        let said = |n: usize| -> Vec<&str> {
            let mut said: Vec<&str> = transcripts[n]
                .iter()
                .filter(|l| !l.starts_with('*'))
                .map(String::as_str)
                .collect();
            said.sort();
            said
        };
        assert_eq!(said(0), ["user2: hi", "user3: hey"]);
        assert_eq!(said(1), ["user1: hello", "user3: hey"]);
        assert_eq!(said(2), ["user1: hello", "user2: hi"]);
        assert!(transcripts[0].contains(&"* user3 joined".to_string()));
    }
}
