"""Draws the kernel's logos (kernelspec/logo-32x32.png, logo-64x64.png, logo-svg.svg).

Standard library only: a PNG is written by hand with zlib. The picture is two mirrored
bars, a replica on each side of a dashed axis, on a rounded dark square.
Run: python3 scripts/make_logos.py
"""
import pathlib
import struct
import zlib

OUT = pathlib.Path(__file__).resolve().parent.parent / "kernelspec"
BG = (32, 42, 68, 255)
LEFT = (255, 140, 0, 255)
RIGHT = (255, 196, 90, 255)
AXIS = (230, 230, 240, 255)
CLEAR = (0, 0, 0, 0)


def pixel(x, y, n):
    """Colour at pixel (x, y) of an n-by-n logo, drawn in unit coordinates."""
    u, v = (x + 0.5) / n, (y + 0.5) / n
    r = 0.18
    cx = min(max(u, r), 1 - r)
    cy = min(max(v, r), 1 - r)
    if (u - cx) ** 2 + (v - cy) ** 2 > r * r:
        return CLEAR
    if abs(u - 0.5) < 0.025 and int(v * 10) % 2 == 0:
        return AXIS
    for i, h in enumerate((0.55, 0.35, 0.7)):
        top, bottom = 0.82 - h, 0.82
        x0 = 0.12 + i * 0.12
        if x0 <= u < x0 + 0.09 and top <= v < bottom:
            return LEFT
        if 1 - x0 - 0.09 < u <= 1 - x0 and top <= v < bottom:
            return RIGHT
    return BG


def png(n):
    rows = b"".join(
        b"\x00" + b"".join(bytes(pixel(x, y, n)) for x in range(n)) for y in range(n)
    )

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", n, n, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def svg():
    bars = []
    for i, h in enumerate((0.55, 0.35, 0.7)):
        x0 = 0.12 + i * 0.12
        y = (0.82 - h) * 64
        bars.append(f'<rect x="{x0*64:.2f}" y="{y:.2f}" width="5.76" height="{h*64:.2f}" fill="#ff8c00"/>')
        bars.append(f'<rect x="{(1-x0-0.09)*64:.2f}" y="{y:.2f}" width="5.76" height="{h*64:.2f}" fill="#ffc45a"/>')
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">\n'
        '<rect width="64" height="64" rx="11.5" fill="#202a44"/>\n'
        + "\n".join(bars)
        + '\n<line x1="32" y1="3" x2="32" y2="61" stroke="#e6e6f0" stroke-width="3" stroke-dasharray="6.4 6.4"/>\n'
        "</svg>\n"
    )


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    (OUT / "logo-32x32.png").write_bytes(png(32))
    (OUT / "logo-64x64.png").write_bytes(png(64))
    (OUT / "logo-svg.svg").write_text(svg())
