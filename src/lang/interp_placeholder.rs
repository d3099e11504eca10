//! Placeholder interpreter API, replaced by the real evaluator.
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::ModuleLoader;
use crate::display::MimeBundle;
use crate::session::{
    Completion, ErrorInfo, ExecuteReply, ExecuteRequest, HistoryEntry, IsComplete, Sink,
};

pub struct Interpreter {
    count: u64,
}

impl Interpreter {
    pub fn new(_interrupt: Arc<AtomicBool>, _modules: ModuleLoader) -> Interpreter {
        Interpreter { count: 0 }
    }
    pub fn execution_count(&self) -> u64 {
        self.count
    }
    pub fn execute(&mut self, req: &ExecuteRequest, _sink: &dyn Sink) -> ExecuteReply {
        if req.store_history && !req.silent {
            self.count += 1;
        }
        ExecuteReply {
            execution_count: self.count,
            result: Err(ErrorInfo {
                ename: "NotImplementedError".into(),
                evalue: "no evaluator yet".into(),
                traceback: vec![],
            }),
            pager: vec![],
            user_expressions: vec![],
        }
    }
    pub fn complete(&mut self, _code: &str, cursor: usize) -> Completion {
        Completion {
            matches: vec![],
            cursor_start: cursor,
            cursor_end: cursor,
        }
    }
    pub fn inspect(&mut self, _code: &str, _cursor: usize, _detail: u8) -> Option<MimeBundle> {
        None
    }
    pub fn history(&self) -> Vec<HistoryEntry> {
        vec![]
    }
}

pub fn is_complete(_code: &str) -> IsComplete {
    IsComplete::Complete
}
