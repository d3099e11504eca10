//! The inline backend's rule, seen through a real session: a figure a cell leaves open is
//! shown once at the end of that cell (a PNG plus `<Figure size 640x480 with 1 Axes>`),
//! a figure already shown with `plt.show()` is not shown again, and a cell that draws
//! nothing shows no figure.

use crate::common::cells as tf_common;

use mirror_kernel::cell::Output;
use mirror_kernel::session::Session;
use tf_common::run;

/// The figures a cell displayed, as their `text/plain` lines; each must carry a PNG.
fn figures(outputs: &[Output]) -> Vec<String> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::DisplayData { data, .. } if data.contains_key("image/png") => data
                .get("text/plain")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            _ => None,
        })
        .collect()
}

#[test]
fn open_figures_show_once_at_cell_end() {
    let session = Session::start().expect("session starts");
    let setup = run(&session, "import matplotlib.pyplot as plt");
    assert!(setup.error.is_none(), "{:?}", setup.error);

    let left_open = run(&session, "plt.plot([1, 4, 9])\nx = 1");
    assert!(left_open.error.is_none(), "{:?}", left_open.error);
    assert_eq!(
        figures(&left_open.outputs),
        vec!["<Figure size 640x480 with 1 Axes>".to_string()]
    );

    let nothing = run(&session, "y = x + 1");
    assert!(figures(&nothing.outputs).is_empty());

    let shown = run(
        &session,
        "plt.figure(figsize=(4, 3))\nplt.plot([3, 2])\nplt.show()",
    );
    assert!(shown.error.is_none(), "{:?}", shown.error);
    assert_eq!(
        figures(&shown.outputs),
        vec!["<Figure size 400x300 with 1 Axes>".to_string()]
    );
}
