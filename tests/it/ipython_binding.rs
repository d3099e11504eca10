//! `IPython.display` as cells use it: display with ids and in-place updates, clear_output,
//! and the rich wrappers' bundles.

use mirror_kernel::bindings::ipython::module;
use mirror_kernel::cell::Output;
use mirror_kernel::lang::StandIn;
use mirror_kernel::lang::{Ctx, Value};

#[test]
fn display_with_id_then_update_through_the_handle() {
    let mut ctx = StandIn::default();
    let d = module("IPython.display", &mut ctx).unwrap();
    let html = ctx
        .call_attr_kw(&d, "HTML", vec![Value::str("<b>epoch 1</b>")], vec![])
        .unwrap();
    let handle = ctx
        .call_attr_kw(
            &d,
            "display",
            vec![html],
            vec![("display_id", Value::Bool(true))],
        )
        .unwrap();
    let md = ctx
        .call_attr_kw(&d, "Markdown", vec![Value::str("**done**")], vec![])
        .unwrap();
    ctx.call_attr_kw(&handle, "update", vec![md], vec![])
        .unwrap();
    ctx.call_attr_kw(
        &d,
        "clear_output",
        vec![],
        vec![("wait", Value::Bool(true))],
    )
    .unwrap();
    let id = ctx.getattr(&handle, "display_id").unwrap();
    let id = id.as_str().unwrap().to_string();
    assert_eq!(id.len(), 32);
    match &ctx.outputs[..] {
        [Output::DisplayData {
            data,
            display_id: Some(shown),
            ..
        }, Output::UpdateDisplayData {
            data: new,
            display_id: updated,
            ..
        }, Output::ClearOutput { wait: true }] => {
            assert_eq!(shown, &id);
            assert_eq!(updated, &id);
            assert_eq!(data["text/html"], "<b>epoch 1</b>");
            assert_eq!(data["text/plain"], "<IPython.core.display.HTML object>");
            assert_eq!(new["text/markdown"], "**done**");
        }
        other => panic!("unexpected outputs {other:?}"),
    }
}

#[test]
fn display_of_plain_values_uses_their_repr_and_returns_none() {
    let mut ctx = StandIn::default();
    let top = module("IPython", &mut ctx).unwrap();
    let d = ctx.getattr(&top, "display").unwrap();
    let r = ctx
        .call_attr_kw(
            &d,
            "display",
            vec![Value::Int(42), Value::str("hi")],
            vec![],
        )
        .unwrap();
    assert!(r.is_none());
    let texts: Vec<String> = ctx
        .outputs
        .iter()
        .map(|o| match o {
            Output::DisplayData {
                data,
                display_id: None,
                ..
            } => data["text/plain"].as_str().unwrap().to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(texts, vec!["42", "'hi'"]);
}

#[test]
fn image_embeds_png_files_and_rejects_other_formats() {
    let mut ctx = StandIn::default();
    let d = module("IPython.display", &mut ctx).unwrap();
    let dir = std::env::temp_dir().join(format!("mk-ipy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png_path = dir.join("dot.png");
    let mut png = vec![];
    {
        let mut enc = png::Encoder::new(&mut png, 1, 1);
        enc.set_color(png::ColorType::Rgb);
        enc.write_header()
            .unwrap()
            .write_image_data(&[255, 0, 0])
            .unwrap();
    }
    std::fs::write(&png_path, &png).unwrap();
    let img = ctx
        .call_attr_kw(
            &d,
            "Image",
            vec![],
            vec![("filename", Value::str(png_path.to_str().unwrap()))],
        )
        .unwrap();
    let bundle = ctx.rich(&img).unwrap();
    use base64::Engine;
    let back = base64::engine::general_purpose::STANDARD
        .decode(bundle["image/png"].as_str().unwrap())
        .unwrap();
    assert_eq!(back, png);
    let txt = dir.join("notes.txt");
    std::fs::write(&txt, "hello").unwrap();
    let e = ctx
        .call_attr_kw(&d, "Image", vec![Value::str(txt.to_str().unwrap())], vec![])
        .unwrap_err();
    assert_eq!(e.type_name(), "ValueError");
    let e = ctx
        .call_attr_kw(&d, "Image", vec![Value::str("/no/such/file.png")], vec![])
        .unwrap_err();
    assert_eq!(e.type_name(), "FileNotFoundError");
    let math = ctx
        .call_attr_kw(&d, "Math", vec![Value::str("x^2")], vec![])
        .unwrap();
    assert_eq!(
        ctx.rich(&math).unwrap()["text/latex"],
        "$\\displaystyle x^2$"
    );
    std::fs::remove_dir_all(&dir).ok();
}
