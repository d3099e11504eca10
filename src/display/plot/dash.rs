//! Line geometry in pixel space: clipping a polyline to the plot rectangle and cutting it
//! into dashes. Dashes are laid out in pixels (not data units) so `--` looks the same on
//! linear and log axes, as in matplotlib.

/// A point in pixels.
pub type P = (f64, f64);

/// Clips the segment `a`-`b` to the rectangle `[x0, x1] x [y0, y1]` (Liang-Barsky);
/// `None` when it lies wholly outside.
pub fn clip(a: P, b: P, (x0, y0, x1, y1): (f64, f64, f64, f64)) -> Option<(P, P)> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let mut t0 = 0.0f64;
    let mut t1 = 1.0f64;
    for (p, q) in [
        (-dx, a.0 - x0),
        (dx, x1 - a.0),
        (-dy, a.1 - y0),
        (dy, y1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    Some((
        (a.0 + t0 * dx, a.1 + t0 * dy),
        (a.0 + t1 * dx, a.1 + t1 * dy),
    ))
}

/// Cuts a polyline into the "on" pieces of a repeating dash `pattern` (alternating on and
/// off lengths in pixels). An empty pattern returns the polyline whole.
pub fn dashes(points: &[P], pattern: &[f64]) -> Vec<Vec<P>> {
    if pattern.is_empty() || pattern.iter().any(|l| *l <= 0.0) {
        return vec![points.to_vec()];
    }
    let mut out = vec![];
    let mut current: Vec<P> = vec![];
    let mut idx = 0;
    let mut left = pattern[0];
    for w in points.windows(2) {
        let (mut a, b) = (w[0], w[1]);
        let mut seg = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        if idx % 2 == 0 && current.is_empty() {
            current.push(a);
        }
        while seg > left {
            let t = left / seg;
            let m = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
            if idx % 2 == 0 {
                current.push(m);
                out.push(std::mem::take(&mut current));
            } else {
                current = vec![m];
            }
            seg -= left;
            a = m;
            idx = (idx + 1) % pattern.len();
            left = pattern[idx];
        }
        left -= seg;
        if idx % 2 == 0 {
            current.push(b);
        }
    }
    if current.len() > 1 {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashes_alternate_on_and_off() {
        let d = dashes(&[(0.0, 0.0), (10.0, 0.0)], &[2.0, 3.0]);
        let starts: Vec<f64> = d.iter().map(|p| p[0].0).collect();
        assert_eq!(starts, vec![0.0, 5.0]);
        assert!((d[1][1].0 - 7.0).abs() < 1e-9);
    }

    #[test]
    fn clip_keeps_the_inside_part() {
        let r = clip((-5.0, 5.0), (15.0, 5.0), (0.0, 0.0, 10.0, 10.0));
        assert_eq!(r, Some(((0.0, 5.0), (10.0, 5.0))));
        assert_eq!(
            clip((-5.0, 20.0), (15.0, 20.0), (0.0, 0.0, 10.0, 10.0)),
            None
        );
    }
}
