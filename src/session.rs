//! The seam between the wire protocol and the language. A [`Session`] owns the interpreter on
//! a thread of its own (with a large stack, so deep Python recursion ends in `RecursionError`
//! rather than a crashed process), takes jobs in arrival order, and reports what a cell shows
//! through an [`Sink`]. Interrupt is a shared flag: the protocol sets it, the interpreter and
//! the training loop check it. This module knows nothing of ZeroMQ or message JSON, and the
//! language knows nothing of sockets: both speak only the plain types of `cell`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::cell::{
    Completion, ErrorInfo, ExecuteReply, ExecuteRequest, HistoryEntry, IsComplete, Output, Sink,
};
use crate::display::MimeBundle;
use crate::lang::Interpreter;

type Reply<T> = Box<dyn FnOnce(T) + Send>;

enum Job {
    Execute {
        request: ExecuteRequest,
        sink: Box<dyn Sink>,
        reply: Reply<ExecuteReply>,
    },
    Complete {
        code: String,
        cursor: usize,
        reply: Reply<Completion>,
    },
    Inspect {
        code: String,
        cursor: usize,
        detail: u8,
        reply: Reply<Option<MimeBundle>>,
    },
    History {
        reply: Reply<Vec<HistoryEntry>>,
    },
}

/// The interpreter's stack. What a cell can ask of it is bounded (see `lang::recursion`):
/// 1,000 levels of Python calls of a few kilobytes each, an expression nested at most
/// 2,990 deep (about 1.5 MB) within any one call, and walks of nested values at most the
/// recursion limit deep; a call that finds less than 4 MB left continues on a new segment.
/// This reserve (address space; pages are used only as deep as a cell goes) holds all of
/// it many times over, so segments are a backstop rather than the rule.
const SESSION_STACK_BYTES: usize = 512 * 1024 * 1024;

/// A running interpreter on its own thread. Dropping the session ends the thread after the
/// job in progress.
pub struct Session {
    jobs: Option<mpsc::Sender<Job>>,
    interrupt: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Session {
    /// Starts the interpreter thread with the kernel's modules bound in.
    pub fn start() -> std::io::Result<Session> {
        let interrupt = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel::<Job>();
        let flag = interrupt.clone();
        let thread = std::thread::Builder::new()
            .name("mirror-session".into())
            .stack_size(SESSION_STACK_BYTES)
            .spawn(move || run_jobs(rx, flag))?;
        Ok(Session {
            jobs: Some(tx),
            interrupt,
            thread: Some(thread),
        })
    }

    /// The flag a cell checks; setting it ends the running cell with `KeyboardInterrupt`.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }

    pub fn interrupt(&self) {
        self.interrupt.store(true, Ordering::SeqCst);
    }

    fn send(&self, job: Job) {
        if let Some(tx) = &self.jobs {
            // A send fails only when the thread has ended; the reply is then never called,
            // which the caller sees as a dropped request.
            let _ = tx.send(job);
        }
    }

    pub fn execute(
        &self,
        request: ExecuteRequest,
        sink: Box<dyn Sink>,
        reply: impl FnOnce(ExecuteReply) + Send + 'static,
    ) {
        self.send(Job::Execute {
            request,
            sink,
            reply: Box::new(reply),
        });
    }

    pub fn complete(
        &self,
        code: String,
        cursor: usize,
        reply: impl FnOnce(Completion) + Send + 'static,
    ) {
        self.send(Job::Complete {
            code,
            cursor,
            reply: Box::new(reply),
        });
    }

    pub fn inspect(
        &self,
        code: String,
        cursor: usize,
        detail: u8,
        reply: impl FnOnce(Option<MimeBundle>) + Send + 'static,
    ) {
        self.send(Job::Inspect {
            code,
            cursor,
            detail,
            reply: Box::new(reply),
        });
    }

    pub fn history(&self, reply: impl FnOnce(Vec<HistoryEntry>) + Send + 'static) {
        self.send(Job::History {
            reply: Box::new(reply),
        });
    }

    /// Runs one cell and waits for it: the notebook runner and tests use this.
    pub fn execute_blocking(&self, request: ExecuteRequest, sink: Box<dyn Sink>) -> ExecuteReply {
        let (tx, rx) = mpsc::channel();
        self.execute(request, sink, move |r| {
            let _ = tx.send(r);
        });
        rx.recv().unwrap_or_else(|_| ExecuteReply {
            execution_count: 0,
            result: Err(ErrorInfo {
                ename: "RuntimeError".into(),
                evalue: "the session has ended".into(),
                traceback: vec!["RuntimeError: the session has ended".into()],
            }),
            pager: vec![],
            user_expressions: vec![],
        })
    }

    /// Whether `code` is a complete cell; answered from the parser alone, without waiting
    /// for a running cell.
    pub fn is_complete(code: &str) -> IsComplete {
        crate::lang::is_complete(code)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.jobs.take();
        self.interrupt.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

fn internal_error(message: String) -> ErrorInfo {
    let evalue = format!("internal error in the kernel: {message} (the session lives on)");
    ErrorInfo {
        ename: "SystemError".into(),
        traceback: vec![format!("SystemError: {evalue}")],
        evalue,
    }
}

fn run_jobs(rx: mpsc::Receiver<Job>, interrupt: Arc<AtomicBool>) {
    let mut interp = Interpreter::new(interrupt.clone(), crate::bindings::load_module);
    interp.set_cell_end_hook(crate::bindings::plt::flush_figures);
    interp.set_provided_modules(crate::bindings::provided_modules());
    while let Ok(job) = rx.recv() {
        match job {
            Job::Execute {
                request,
                sink,
                reply,
            } => {
                // An interrupt that arrived while idle must not kill the next cell.
                interrupt.store(false, Ordering::SeqCst);
                let outcome =
                    catch_unwind(AssertUnwindSafe(|| interp.execute(&request, sink.as_ref())));
                let r = match outcome {
                    Ok(r) => r,
                    Err(p) => {
                        let err = internal_error(panic_message(p.as_ref()));
                        ExecuteReply {
                            execution_count: interp.execution_count(),
                            result: Err(err),
                            pager: vec![],
                            user_expressions: vec![],
                        }
                    }
                };
                if let Err(e) = &r.result {
                    if !request.silent {
                        sink.emit(Output::Error(e.clone()));
                    }
                }
                interrupt.store(false, Ordering::SeqCst);
                reply(r);
            }
            Job::Complete {
                code,
                cursor,
                reply,
            } => {
                let c = catch_unwind(AssertUnwindSafe(|| interp.complete(&code, cursor)))
                    .unwrap_or(Completion {
                        matches: vec![],
                        cursor_start: cursor,
                        cursor_end: cursor,
                    });
                reply(c);
            }
            Job::Inspect {
                code,
                cursor,
                detail,
                reply,
            } => {
                let b = catch_unwind(AssertUnwindSafe(|| interp.inspect(&code, cursor, detail)))
                    .unwrap_or(None);
                reply(b);
            }
            Job::History { reply } => reply(interp.history()),
        }
    }
}
