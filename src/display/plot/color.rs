//! Colours as matplotlib names them: the default `tab10` cycle, single-letter and CSS-like
//! names, `#rrggbb` strings, and the `gray` and `viridis` colour maps `imshow` uses.

use super::PlotError;

/// An opaque RGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// Matplotlib's default property cycle (`tab10`), in order.
pub const TAB10: [Rgb; 10] = [
    Rgb(0x1f, 0x77, 0xb4),
    Rgb(0xff, 0x7f, 0x0e),
    Rgb(0x2c, 0xa0, 0x2c),
    Rgb(0xd6, 0x27, 0x28),
    Rgb(0x94, 0x67, 0xbd),
    Rgb(0x8c, 0x56, 0x4b),
    Rgb(0xe3, 0x77, 0xc2),
    Rgb(0x7f, 0x7f, 0x7f),
    Rgb(0xbc, 0xbd, 0x22),
    Rgb(0x17, 0xbe, 0xcf),
];

/// The colour for a single-letter format-string code (`'r'` in `'r--'`).
pub fn from_letter(c: char) -> Option<Rgb> {
    Some(match c {
        'b' => Rgb(0, 0, 255),
        'g' => Rgb(0, 128, 0),
        'r' => Rgb(255, 0, 0),
        'c' => Rgb(0, 191, 191),
        'm' => Rgb(191, 0, 191),
        'y' => Rgb(191, 191, 0),
        'k' => Rgb(0, 0, 0),
        'w' => Rgb(255, 255, 255),
        _ => return None,
    })
}

/// Parses a matplotlib colour: a letter, a common name, `tab:blue`, `C0`..`C9`, `#rgb`
/// or `#rrggbb`.
pub fn parse(s: &str) -> Result<Rgb, PlotError> {
    let t = s.trim().to_ascii_lowercase();
    let mut chars = t.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if let Some(rgb) = from_letter(c) {
            return Ok(rgb);
        }
    }
    if let Some(n) = t.strip_prefix('c').and_then(|d| d.parse::<usize>().ok()) {
        return Ok(TAB10[n % TAB10.len()]);
    }
    if let Some(h) = t.strip_prefix('#') {
        return parse_hex(h).ok_or_else(|| PlotError::BadColor(s.to_string()));
    }
    let named = match t.trim_start_matches("tab:") {
        "blue" if t.starts_with("tab:") => TAB10[0],
        "orange" => TAB10[1],
        "green" if t.starts_with("tab:") => TAB10[2],
        "red" if t.starts_with("tab:") => TAB10[3],
        "purple" => TAB10[4],
        "brown" => TAB10[5],
        "pink" => TAB10[6],
        "gray" | "grey" => TAB10[7],
        "olive" => TAB10[8],
        "cyan" if t.starts_with("tab:") => TAB10[9],
        "blue" => Rgb(0, 0, 255),
        "green" => Rgb(0, 128, 0),
        "red" => Rgb(255, 0, 0),
        "cyan" => Rgb(0, 255, 255),
        "magenta" => Rgb(255, 0, 255),
        "yellow" => Rgb(255, 255, 0),
        "black" => Rgb(0, 0, 0),
        "white" => Rgb(255, 255, 255),
        "navy" => Rgb(0, 0, 128),
        "darkblue" => Rgb(0, 0, 139),
        "darkgreen" => Rgb(0, 100, 0),
        "darkred" => Rgb(139, 0, 0),
        "lightblue" => Rgb(173, 216, 230),
        "lightgray" | "lightgrey" => Rgb(211, 211, 211),
        "darkgray" | "darkgrey" => Rgb(169, 169, 169),
        "teal" => Rgb(0, 128, 128),
        "violet" => Rgb(238, 130, 238),
        "gold" => Rgb(255, 215, 0),
        "crimson" => Rgb(220, 20, 60),
        "skyblue" => Rgb(135, 206, 235),
        "steelblue" => Rgb(70, 130, 180),
        "salmon" => Rgb(250, 128, 114),
        _ => return Err(PlotError::BadColor(s.to_string())),
    };
    Ok(named)
}

fn parse_hex(h: &str) -> Option<Rgb> {
    let digit = |i: usize, len: usize| u8::from_str_radix(h.get(i..i + len)?, 16).ok();
    match h.len() {
        6 | 8 => Some(Rgb(digit(0, 2)?, digit(2, 2)?, digit(4, 2)?)),
        3 => Some(Rgb(digit(0, 1)? * 17, digit(1, 1)? * 17, digit(2, 1)? * 17)),
        _ => None,
    }
}

/// A colour map for `imshow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmap {
    Gray,
    GrayR,
    Viridis,
}

/// Nine evenly spaced stops of viridis; between them the map is interpolated linearly,
/// which stays within a shade of the full table.
const VIRIDIS: [Rgb; 9] = [
    Rgb(0x44, 0x01, 0x54),
    Rgb(0x47, 0x2d, 0x7b),
    Rgb(0x3b, 0x52, 0x8b),
    Rgb(0x2c, 0x72, 0x8e),
    Rgb(0x21, 0x91, 0x8c),
    Rgb(0x28, 0xae, 0x80),
    Rgb(0x5e, 0xc9, 0x62),
    Rgb(0xad, 0xdc, 0x30),
    Rgb(0xfd, 0xe7, 0x25),
];

impl Cmap {
    pub fn parse(name: &str) -> Result<Cmap, PlotError> {
        match name {
            "gray" | "grey" | "Greys_r" => Ok(Cmap::Gray),
            "gray_r" | "grey_r" | "binary" | "Greys" => Ok(Cmap::GrayR),
            "viridis" => Ok(Cmap::Viridis),
            other => Err(PlotError::BadCmap(other.to_string())),
        }
    }

    /// The colour at `t` in [0, 1] (clamped; NaN maps to the low end).
    pub fn at(self, t: f64) -> Rgb {
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        match self {
            Cmap::Gray => {
                let v = (t * 255.0).round() as u8;
                Rgb(v, v, v)
            }
            Cmap::GrayR => {
                let v = ((1.0 - t) * 255.0).round() as u8;
                Rgb(v, v, v)
            }
            Cmap::Viridis => {
                let pos = t * (VIRIDIS.len() - 1) as f64;
                let i = (pos.floor() as usize).min(VIRIDIS.len() - 2);
                let f = pos - i as f64;
                let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
                let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * f).round() as u8;
                Rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
            }
        }
    }
}
