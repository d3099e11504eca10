//! `matplotlib.pyplot` driven as a cell would drive it: figures appear in the session
//! state, `show()` and the end-of-cell hook display PNGs of the requested size, `subplots`
//! axes index like numpy arrays, and `savefig` writes PNG or SVG.

use crate::common::floats;
use base64::Engine;
use mirror_kernel::bindings::plt::{flush_figures, module};
use mirror_kernel::cell::Output;
use mirror_kernel::lang::StandIn;
use mirror_kernel::lang::{Ctx, Value};

fn displayed_pngs(ctx: &mut StandIn) -> Vec<(String, (u32, u32))> {
    ctx.outputs
        .drain(..)
        .filter_map(|o| match o {
            Output::DisplayData { data, .. } => {
                let text = data["text/plain"].as_str().unwrap().to_string();
                let png = base64::engine::general_purpose::STANDARD
                    .decode(data.get("image/png")?.as_str().unwrap())
                    .unwrap();
                let info = png::Decoder::new(png.as_slice()).read_info().unwrap();
                let (w, h) = (info.info().width, info.info().height);
                Some((text, (w, h)))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn plot_then_show_displays_one_png_and_closes_the_figure() {
    let mut ctx = StandIn::default();
    let plt = module("matplotlib.pyplot", &mut ctx).unwrap();
    let lines = ctx
        .call_attr_kw(
            &plt,
            "plot",
            vec![floats(&[1.0, 4.0, 9.0]), Value::str("r--")],
            vec![("label", Value::str("squares"))],
        )
        .unwrap();
    assert!(ctx.repr(&lines).unwrap().contains("Line2D"));
    ctx.call_attr_kw(&plt, "title", vec![Value::str("Loss")], vec![])
        .unwrap();
    ctx.call_attr_kw(&plt, "legend", vec![], vec![]).unwrap();
    ctx.call_attr_kw(&plt, "show", vec![], vec![]).unwrap();
    let shown = displayed_pngs(&mut ctx);
    assert_eq!(
        shown,
        vec![("<Figure size 640x480 with 1 Axes>".to_string(), (640, 480))]
    );
    // Nothing is left for the end-of-cell hook.
    flush_figures(&mut ctx);
    assert!(ctx.outputs.is_empty());
}

#[test]
fn figures_left_open_are_shown_at_cell_end() {
    let mut ctx = StandIn::default();
    let plt = module("matplotlib.pyplot", &mut ctx).unwrap();
    let size = Value::tuple(vec![Value::Float(3.0), Value::Float(2.0)]);
    ctx.call_attr_kw(
        &plt,
        "figure",
        vec![],
        vec![("figsize", size), ("dpi", Value::Int(50))],
    )
    .unwrap();
    ctx.call_attr_kw(
        &plt,
        "hist",
        vec![floats(&[1.0, 2.0, 2.0, 3.0, 3.0, 3.0])],
        vec![("bins", Value::Int(3))],
    )
    .unwrap();
    // An empty figure shows as text only, as matplotlib's inline backend does.
    ctx.call_attr_kw(&plt, "figure", vec![], vec![]).unwrap();
    flush_figures(&mut ctx);
    let texts: Vec<String> = ctx
        .outputs
        .iter()
        .map(|o| match o {
            Output::DisplayData { data, .. } => {
                format!(
                    "{} png={}",
                    data["text/plain"].as_str().unwrap(),
                    data.contains_key("image/png")
                )
            }
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        texts,
        vec![
            "<Figure size 150x100 with 1 Axes> png=true",
            "<Figure size 640x480 with 0 Axes> png=false"
        ]
    );
    assert_eq!(
        displayed_pngs(&mut ctx),
        vec![("<Figure size 150x100 with 1 Axes>".to_string(), (150, 100))]
    );
}

#[test]
fn hist_counts_match_numpy() {
    let mut ctx = StandIn::default();
    let plt = module("matplotlib.pyplot", &mut ctx).unwrap();
    // numpy.histogram([0, 1, 1, 2, 5, 10], bins=4) -> [4, 0, 1, 1], edges 0, 2.5, 5, 7.5, 10
    let out = ctx
        .call_attr_kw(
            &plt,
            "hist",
            vec![floats(&[0.0, 1.0, 1.0, 2.0, 5.0, 10.0])],
            vec![("bins", Value::Int(4))],
        )
        .unwrap();
    let parts = out.as_seq().unwrap();
    let counts: Vec<f64> = parts[0]
        .as_seq()
        .unwrap()
        .iter()
        .map(|v| v.as_float().unwrap())
        .collect();
    let edges: Vec<f64> = parts[1]
        .as_seq()
        .unwrap()
        .iter()
        .map(|v| v.as_float().unwrap())
        .collect();
    assert_eq!(counts, vec![4.0, 0.0, 1.0, 1.0]);
    assert_eq!(edges, vec![0.0, 2.5, 5.0, 7.5, 10.0]);
}

#[test]
fn subplots_axes_index_like_numpy_and_savefig_writes_files() {
    let mut ctx = StandIn::default();
    let plt = module("matplotlib.pyplot", &mut ctx).unwrap();
    let res = ctx
        .call_attr_kw(
            &plt,
            "subplots",
            vec![Value::Int(2), Value::Int(2)],
            vec![("figsize", Value::tuple(vec![Value::Int(8), Value::Int(6)]))],
        )
        .unwrap();
    let parts = res.as_seq().unwrap();
    let (fig, axes) = (parts[0].clone(), parts[1].clone());
    let Value::Native(arr) = &axes else {
        panic!("axes array")
    };
    let ax01 = arr
        .clone()
        .getitem(&Value::tuple(vec![Value::Int(0), Value::Int(1)]), &mut ctx)
        .unwrap();
    ctx.call_attr_kw(
        &ax01,
        "plot",
        vec![floats(&[0.0, 1.0]), floats(&[1.0, 0.0])],
        vec![],
    )
    .unwrap();
    ctx.call_attr_kw(&ax01, "set_title", vec![Value::str("top right")], vec![])
        .unwrap();
    let row1 = arr.clone().getitem(&Value::Int(-1), &mut ctx).unwrap();
    let Value::Native(row) = &row1 else {
        panic!("row")
    };
    let ax10 = row.clone().getitem(&Value::Int(0), &mut ctx).unwrap();
    let digit: Vec<Value> = (0..28)
        .map(|r| floats(&(0..28).map(|c| ((r * c) % 255) as f64).collect::<Vec<_>>()))
        .collect();
    ctx.call_attr_kw(
        &ax10,
        "imshow",
        vec![Value::list(digit)],
        vec![("cmap", Value::str("gray"))],
    )
    .unwrap();
    assert!(
        arr.clone().getitem(&Value::Int(2), &mut ctx).is_err(),
        "index 2 is out of bounds"
    );
    assert_eq!(ctx.repr(&fig).unwrap(), "<Figure size 800x600 with 4 Axes>");
    let dir = std::env::temp_dir().join(format!("mk-plt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png_path = dir.join("grid.png");
    let svg_path = dir.join("grid.svg");
    ctx.call_attr_kw(
        &fig,
        "savefig",
        vec![Value::str(png_path.to_str().unwrap())],
        vec![("dpi", Value::Int(50))],
    )
    .unwrap();
    ctx.call_attr_kw(
        &plt,
        "savefig",
        vec![Value::str(svg_path.to_str().unwrap())],
        vec![],
    )
    .unwrap();
    let png = std::fs::read(&png_path).unwrap();
    let info = png::Decoder::new(png.as_slice()).read_info().unwrap();
    assert_eq!((info.info().width, info.info().height), (400, 300));
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.contains("width=\"800\""));
    assert!(ctx
        .call_attr_kw(&plt, "savefig", vec![Value::str("x.jpg")], vec![])
        .is_err());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_arguments_raise_python_errors() {
    let mut ctx = StandIn::default();
    let plt = module("matplotlib.pyplot", &mut ctx).unwrap();
    let e = ctx
        .call_attr_kw(
            &plt,
            "plot",
            vec![floats(&[1.0, 2.0]), floats(&[1.0])],
            vec![],
        )
        .unwrap_err();
    assert_eq!(e.type_name(), "ValueError");
    let e = ctx
        .call_attr_kw(&plt, "plot", vec![floats(&[1.0]), Value::str("q")], vec![])
        .unwrap_err();
    assert_eq!(e.type_name(), "ValueError");
    let e = ctx
        .call_attr_kw(&plt, "imshow", vec![floats(&[])], vec![])
        .unwrap_err();
    assert_eq!(e.type_name(), "TypeError");
    let huge = Value::tuple(vec![Value::Int(100000), Value::Int(5)]);
    let e = ctx
        .call_attr_kw(&plt, "figure", vec![], vec![("figsize", huge)])
        .unwrap_err();
    assert_eq!(e.type_name(), "ValueError");
}

#[test]
fn huge_grids_and_bin_counts_are_refused() {
    let mut ctx = StandIn::default();
    let plt = module("matplotlib.pyplot", &mut ctx).unwrap();
    let big = Value::Int(i64::MAX);
    let e = ctx
        .call_attr_kw(
            &plt,
            "subplot",
            vec![big.clone(), big, Value::Int(1)],
            vec![],
        )
        .unwrap_err();
    assert_eq!(e.type_name(), "ValueError");
    let e = ctx
        .call_attr_kw(
            &plt,
            "hist",
            vec![floats(&[1.0])],
            vec![("bins", Value::Int(1 << 40))],
        )
        .unwrap_err();
    assert_eq!(e.type_name(), "ValueError");
    let e = ctx
        .call_attr_kw(
            &plt,
            "hist",
            vec![floats(&[1.0])],
            vec![("bins", Value::Int(0))],
        )
        .unwrap_err();
    assert_eq!(e.type_name(), "ValueError");
}
