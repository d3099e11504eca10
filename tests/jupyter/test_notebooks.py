"""Every classroom notebook in notebooks/ executed as a class would: by
`jupyter nbconvert --to notebook --execute` through the installed `mirror` kernel. The
executed notebook must validate against nbformat's schema and hold no error output; at
least one must hold an image/png plot, and `nbconvert --to html` must embed it."""
import os
import pathlib
import shutil
import subprocess
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
JUPYTER = [sys.executable, "-m", "jupyter"]


def execute(src: pathlib.Path, workdir: pathlib.Path) -> pathlib.Path:
    # Run a copy in a scratch folder: a notebook may write files (a saved model).
    copy = workdir / src.name
    shutil.copy(src, copy)
    out = workdir / (src.stem + ".executed.ipynb")
    subprocess.run(
        JUPYTER
        + [
            "nbconvert", "--to", "notebook", "--execute",
            "--ExecutePreprocessor.kernel_name=mirror",
            "--ExecutePreprocessor.timeout=300",
            "--output", out.name, str(copy),
        ],
        check=True,
        cwd=workdir,
        env=dict(os.environ),
    )
    return out


def test_there_are_classroom_notebooks():
    assert len(NOTEBOOKS) >= 6, [n.name for n in NOTEBOOKS]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[n.stem for n in NOTEBOOKS])
def test_notebook_executes_cleanly(path, tmp_path):
    out = execute(path, tmp_path)
    nb = nbformat.read(out, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "a classroom notebook has code cells"
    for cell in code:
        assert cell.execution_count is not None, cell.source
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"{path.name}: {cell.source!r} raised {errors[0].ename}: {errors[0].evalue}"


@pytest.mark.timeout(600)
def test_a_plot_is_embedded_in_html(tmp_path):
    path = ROOT / "notebooks" / "06-full-classifier.ipynb"
    out = execute(path, tmp_path)
    nb = nbformat.read(out, as_version=4)
    pngs = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs
        if o.output_type == "display_data" and "image/png" in o.get("data", {})
    ]
    assert pngs, "the classifier notebook shows its training curves"
    subprocess.run(
        JUPYTER + ["nbconvert", "--to", "html", "--output", "page.html", str(out)],
        check=True,
        cwd=tmp_path,
    )
    html = (tmp_path / "page.html").read_text()
    assert "data:image/png;base64," + pngs[0]["data"]["image/png"][:64] in html
