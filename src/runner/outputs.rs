//! Turns a cell's [`Output`] events into nbformat 4.5 output objects, as Jupyter's own
//! clients record them: consecutive stream text of one name is merged, `update_display_data`
//! rewrites every earlier display with that id (in any cell so far), and `clear_output`
//! empties the cell at once or, with `wait`, just before the next output arrives.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::cell::Output;

/// Where each display id was shown: (cell index, output index) pairs.
#[derive(Default)]
pub struct Displays {
    shown: HashMap<String, Vec<(usize, usize)>>,
}

/// Builds the outputs of one cell, given the outputs recorded so far for every cell (so a
/// later cell can update an earlier cell's display).
pub struct CellOutputs<'a> {
    cell: usize,
    cells: &'a mut Vec<Vec<Value>>,
    displays: &'a mut Displays,
    pending_clear: bool,
}

impl<'a> CellOutputs<'a> {
    /// Starts recording for cell `cell`; `cells` holds one output list per cell.
    pub fn new(cell: usize, cells: &'a mut Vec<Vec<Value>>, displays: &'a mut Displays) -> Self {
        if cells.len() <= cell {
            cells.resize(cell + 1, vec![]);
        }
        CellOutputs {
            cell,
            cells,
            displays,
            pending_clear: false,
        }
    }

    fn clear_now(&mut self) {
        let cell = self.cell;
        if let Some(list) = self.cells.get_mut(cell) {
            list.clear();
        }
        for places in self.displays.shown.values_mut() {
            places.retain(|(c, _)| *c != cell);
        }
    }

    fn push(&mut self, v: Value) -> usize {
        if self.pending_clear {
            self.pending_clear = false;
            self.clear_now();
        }
        let list = &mut self.cells[self.cell];
        list.push(v);
        list.len() - 1
    }

    /// The outputs recorded for this cell so far.
    pub fn outputs(&self) -> &[Value] {
        &self.cells[self.cell]
    }

    /// Applies one output event.
    pub fn apply(&mut self, out: &Output) {
        match out {
            Output::Stream { name, text } => {
                if self.pending_clear {
                    self.pending_clear = false;
                    self.clear_now();
                }
                let list = &mut self.cells[self.cell];
                if let Some(last) = list.last_mut() {
                    if last["output_type"] == "stream" && last["name"] == name.as_str() {
                        let joined = format!("{}{}", last["text"].as_str().unwrap_or(""), text);
                        last["text"] = Value::String(joined);
                        return;
                    }
                }
                list.push(json!({"output_type": "stream", "name": name.as_str(), "text": text}));
            }
            Output::DisplayData {
                data,
                metadata,
                display_id,
            } => {
                let idx = self.push(json!({
                    "output_type": "display_data",
                    "data": Value::Object(data.clone()),
                    "metadata": Value::Object(metadata.clone()),
                }));
                if let Some(id) = display_id {
                    self.displays
                        .shown
                        .entry(id.clone())
                        .or_default()
                        .push((self.cell, idx));
                }
            }
            Output::UpdateDisplayData {
                data,
                metadata,
                display_id,
            } => {
                let places = self
                    .displays
                    .shown
                    .get(display_id)
                    .cloned()
                    .unwrap_or_default();
                for (c, i) in places {
                    if let Some(o) = self.cells.get_mut(c).and_then(|l| l.get_mut(i)) {
                        o["data"] = Value::Object(data.clone());
                        o["metadata"] = Value::Object(metadata.clone());
                    }
                }
            }
            Output::ClearOutput { wait } => {
                if *wait {
                    self.pending_clear = true;
                } else {
                    self.pending_clear = false;
                    self.clear_now();
                }
            }
            Output::ExecuteResult {
                execution_count,
                data,
                metadata,
            } => {
                self.push(json!({
                    "output_type": "execute_result",
                    "execution_count": execution_count,
                    "data": Value::Object(data.clone()),
                    "metadata": Value::Object(metadata.clone()),
                }));
            }
            Output::Error(e) => {
                self.push(json!({
                    "output_type": "error",
                    "ename": e.ename,
                    "evalue": e.evalue,
                    "traceback": e.traceback,
                }));
            }
        }
    }
}

/// nbformat keeps multi-line strings in `data` either whole or as a list of lines; readers
/// accept both, so data is written whole. This normalises a source field read from disk.
pub fn source_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// Whether `id` is a valid nbformat 4.5 cell id.
pub fn valid_cell_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
