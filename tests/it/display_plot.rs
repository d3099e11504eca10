//! Plots render to real images: PNGs that decode at the requested size, hold the colours
//! that were drawn, and SVGs with the figure's size. Text needs no installed font.

use mirror_kernel::display::plot::render::{to_png, to_svg};
use mirror_kernel::display::plot::{Axes, Cmap, Figure, LineStyle, Marker, Series, TAB10};

fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(png_bytes);
    let mut reader = decoder.read_info().expect("a valid PNG header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("a valid PNG frame");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let px = buf[..info.buffer_size()]
        .chunks(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, info.height, px)
}

fn count(px: &[[u8; 3]], rgb: [u8; 3]) -> usize {
    px.iter().filter(|p| **p == rgb).count()
}

fn line_axes() -> Axes {
    let mut ax = Axes::default();
    let x: Vec<f64> = (0..50).map(|i| i as f64 / 5.0).collect();
    let y: Vec<f64> = x.iter().map(|v| v.sin()).collect();
    let color = ax.cycle_color();
    ax.series.push(Series::Line {
        x: x.clone(),
        y,
        color,
        style: LineStyle::Solid,
        marker: None,
        width: 1.5,
        label: Some("sin".into()),
    });
    let color = ax.cycle_color();
    ax.series.push(Series::Line {
        x: x.clone(),
        y: x.iter().map(|v| v.cos()).collect(),
        color,
        style: LineStyle::Dashed,
        marker: Some(Marker::Circle),
        width: 1.5,
        label: Some("cos".into()),
    });
    ax.title = "Waves".into();
    ax.xlabel = "x".into();
    ax.ylabel = "value".into();
    ax.legend = true;
    ax
}

#[test]
fn default_figure_is_640_by_480_with_the_tab10_colours() {
    let mut fig = Figure::default();
    fig.axes.push(line_axes());
    let (w, h, px) = decode(&to_png(&fig, None).unwrap());
    assert_eq!((w, h), (640, 480));
    let blue = [TAB10[0].0, TAB10[0].1, TAB10[0].2];
    let orange = [TAB10[1].0, TAB10[1].1, TAB10[1].2];
    assert!(
        count(&px, blue) > 200,
        "the first line is drawn in tab:blue"
    );
    assert!(
        count(&px, orange) > 100,
        "the second line is drawn in tab:orange"
    );
    // Text (title, ticks, legend) needs the embedded font: some dark anti-aliased pixels.
    let dark = px
        .iter()
        .filter(|p| p[0] < 100 && p[0] == p[1] && p[1] == p[2])
        .count();
    assert!(dark > 500, "{dark} dark pixels: text and frame");
    assert_eq!(fig.describe(), "<Figure size 640x480 with 1 Axes>");
}

#[test]
fn figsize_and_dpi_set_the_pixel_size() {
    let mut fig = Figure::grid((3.0, 2.0), 50.0, 2, 2);
    for (i, ax) in fig.axes.iter_mut().enumerate() {
        ax.series.push(Series::Bars {
            x: vec![0.0, 1.0, 2.0],
            heights: vec![1.0, 2.0 + i as f64, 0.5],
            width: 0.8,
            color: TAB10[2],
            label: None,
        });
    }
    let (w, h, px) = decode(&to_png(&fig, None).unwrap());
    assert_eq!((w, h), (150, 100));
    assert!(count(&px, [TAB10[2].0, TAB10[2].1, TAB10[2].2]) > 50);
    let (w2, h2, _) = decode(&to_png(&fig, Some(100.0)).unwrap());
    assert_eq!((w2, h2), (300, 200));
    assert_eq!(fig.describe(), "<Figure size 150x100 with 4 Axes>");
}

#[test]
fn imshow_of_a_digit_keeps_its_pixels() {
    // A 28x28 "digit": a bright square in the middle of a dark field.
    let mut data = vec![0.0; 28 * 28];
    for r in 8..20 {
        for c in 10..18 {
            data[r * 28 + c] = 255.0;
        }
    }
    let mut fig = Figure::new((3.0, 3.0), 100.0);
    let ax = fig.current_axes();
    ax.series.push(Series::Image {
        rows: 28,
        cols: 28,
        data,
        cmap: Cmap::Gray,
        vmin: 0.0,
        vmax: 255.0,
    });
    ax.hide_axis = true;
    let (w, h, px) = decode(&to_png(&fig, None).unwrap());
    assert_eq!((w, h), (300, 300));
    let white = count(&px, [255, 255, 255]);
    let black = count(&px, [0, 0, 0]);
    // The image fills most of the figure; 96 of its 784 cells are white.
    assert!(black > 30_000, "{black} black pixels");
    let ratio = black as f64 / (black as f64 + 96.0 / 688.0 * black as f64);
    assert!(ratio > 0.8 && white > 3_000, "{white} white");
}

#[test]
fn viridis_ends_are_matplotlibs() {
    assert_eq!(Cmap::Viridis.at(0.0).hex(), "#440154");
    assert_eq!(Cmap::Viridis.at(1.0).hex(), "#fde725");
    assert_eq!(Cmap::Viridis.at(0.5).hex(), "#21918c");
}

#[test]
fn log_scale_scatter_and_svg() {
    let mut fig = Figure::default();
    let ax = fig.current_axes();
    let color = ax.cycle_color();
    ax.series.push(Series::Scatter {
        x: vec![1.0, 10.0, 100.0, 1000.0],
        y: vec![1.0, 2.0, 3.0, 4.0],
        color,
        marker: Marker::Square,
        size: 36.0,
        label: Some("points".into()),
    });
    ax.xlog = true;
    ax.grid = true;
    let (_, _, px) = decode(&to_png(&fig, None).unwrap());
    assert!(count(&px, [0x1f, 0x77, 0xb4]) > 4 * 40);
    let svg = to_svg(&fig).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("width=\"640\"") && svg.contains("height=\"480\"")
    );
    assert!(svg.contains("#1F77B4") || svg.contains("#1f77b4"));
}

#[test]
fn absurd_sizes_are_refused() {
    let fig = Figure::new((1e6, 4.0), 100.0);
    assert!(to_png(&fig, None).is_err());
    let fig = Figure::new((f64::NAN, 4.0), 100.0);
    assert!(fig.pixels().is_err());
}
