"""A small notebook executed through the kernel by nbclient, as `jupyter nbconvert
--execute` would."""
import nbformat
from nbclient import NotebookClient


def test_nbclient_runs_a_notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("a = 2"),
        nbformat.v4.new_code_cell("print(a * 21)"),
        nbformat.v4.new_code_cell("a + 1"),
    ]
    client = NotebookClient(nb, kernel_name="mirror", timeout=60, startup_timeout=60)
    client.execute()
    assert nb.metadata["language_info"]["name"] == "python"
    assert nb.cells[1].outputs[0]["text"] == "42\n"
    assert nb.cells[2].outputs[0]["data"]["text/plain"] == "3"
    assert nb.cells[2].execution_count == 3
