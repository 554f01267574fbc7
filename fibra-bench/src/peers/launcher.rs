//! How each kind of external peer is started: a script under an interpreter, a
//! C/C++ program compiled here, a Go module, a Java source file, an Erlang
//! module, an example of this workspace.

use super::build::{self, Compiler};
use super::{Unavailable, find_program, java};
use crate::ctx::Ctx;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

/// How to start one external peer. Paths are relative to the repository's
/// `peers/` directory.
pub enum Launcher {
    /// `script` run by `interpreter` from `PATH` (Debian package `package`).
    Script {
        interpreter: &'static str,
        package: &'static str,
        script: &'static str,
    },
    /// `source` compiled by `compiler` and linked with `libs`; a missing header
    /// or library means the Debian package `package` is missing.
    Native {
        compiler: Compiler,
        source: &'static str,
        libs: &'static [&'static str],
        package: &'static str,
    },
    /// The Go module in directory `module`, built with `go build`.
    Go { module: &'static str },
    /// `source` run by the source launcher of a JDK ≥ 21, with JVM `flags`.
    Java {
        source: &'static str,
        flags: &'static [&'static str],
    },
    /// The Erlang module `source` (`erlang/NAME.erl`), compiled with `erlc`
    /// and run as `erl -noshell FLAGS -pa DIR -run NAME main ARGS…`, with
    /// emulator `flags` such as the scheduler count (`+S 2:2`).
    Erlang {
        source: &'static str,
        flags: &'static [&'static str],
    },
    /// The example `example` of the package `package` of this workspace, built
    /// with `cargo build --release` and the package's cargo `features`:
    /// fibra's own programs (fibra-http's servers), which run as processes of
    /// their own as the peers do.
    Example {
        package: &'static str,
        example: &'static str,
        features: &'static [&'static str],
    },
    /// This very program, as the child program of the experiment called so
    /// (`fibra-bench --child <experiment>`): fibra measured in a process of its
    /// own, e.g. under strace.
    Child(&'static str),
}

/// A peer ready to run: a program and the arguments that come before the
/// experiment's own.
pub struct Prepared {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

impl Prepared {
    /// The whole command line, for running the peer under another program
    /// (`strace`).
    pub fn argv(&self) -> impl Iterator<Item = OsString> + '_ {
        std::iter::once(self.program.clone().into_os_string()).chain(self.args.iter().cloned())
    }

    /// A command that runs the peer; the caller adds the experiment's arguments.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args);
        cmd
    }
}

impl Launcher {
    /// Finds the toolchain, builds the peer if it needs building, and says how to
    /// run it.
    pub fn prepare(&self, ctx: &Ctx) -> Result<Prepared, Unavailable> {
        let source = |rel: &str| {
            let path = ctx.peers_dir.join(rel);
            if path.exists() {
                Ok(path)
            } else {
                Err(Unavailable::Missing(format!(
                    "peers/{rel} not in this checkout"
                )))
            }
        };
        match *self {
            Launcher::Script {
                interpreter,
                package,
                script,
            } => {
                let script = source(script)?;
                let program = find_program(interpreter, &[])
                    .ok_or_else(|| Unavailable::Missing(format!("apt-get install {package}")))?;
                Ok(Prepared {
                    program,
                    args: vec![script.into()],
                })
            }
            Launcher::Native {
                compiler,
                source: rel,
                libs,
                package,
            } => {
                let source = source(rel)?;
                let program = build::native(ctx, compiler, &source, rel, libs, package)?;
                Ok(Prepared {
                    program,
                    args: Vec::new(),
                })
            }
            Launcher::Go { module } => {
                source(&format!("{module}/go.mod"))?;
                let dir = ctx.peers_dir.join(module);
                let program = build::go(ctx, &dir, module)?;
                Ok(Prepared {
                    program,
                    args: Vec::new(),
                })
            }
            Launcher::Example {
                package,
                example,
                features,
            } => Ok(Prepared {
                program: build::example(ctx, package, example, features)?,
                args: Vec::new(),
            }),
            Launcher::Child(experiment) => {
                let program =
                    std::env::current_exe().map_err(|e| Unavailable::Broken(e.to_string()))?;
                Ok(Prepared {
                    program,
                    args: vec!["--child".into(), experiment.into()],
                })
            }
            Launcher::Erlang { source: rel, flags } => {
                let source = source(rel)?;
                let (program, module_dir, module) = build::erlang(ctx, &source, rel)?;
                let mut args: Vec<OsString> = vec!["-noshell".into()];
                args.extend(flags.iter().map(OsString::from));
                args.extend(["-pa".into(), module_dir.into_os_string()]);
                args.extend(["-run".into(), module.into(), "main".into()]);
                Ok(Prepared { program, args })
            }
            Launcher::Java { source: rel, flags } => {
                let source = source(rel)?;
                let program = java::find(21)?;
                let args = flags.iter().map(OsString::from).chain([source.into()]);
                Ok(Prepared {
                    program,
                    args: args.collect(),
                })
            }
        }
    }
}
