"""The kernel against jupyter_kernel_test's conformance suite, with every sample filled."""
import os
import sys
import unittest

import jupyter_kernel_test

os.environ["JUPYTER_PATH"] = os.path.join(sys.prefix, "share", "jupyter")


class MirrorKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "mirror"
    language_name = "python"
    file_extension = ".py"

    code_hello_world = "print('hello, world')"
    code_stderr = "import sys\nprint('test', file=sys.stderr)"

    completion_samples = [
        {"text": "zi", "matches": {"zip"}},
    ]
    complete_code_samples = ["1", "print('hello, world')", "def f(x):\n  return x*2\n\n\n"]
    incomplete_code_samples = ["print('''hello", "def f(x):\n  x*2"]
    invalid_code_samples = ["import = 7q"]

    code_page_something = "print?"
    code_generate_error = "raise ValueError('boom')"
    code_execute_result = [
        {"code": "1+2+3", "result": "6"},
        {"code": "[n*n for n in range(1, 4)]", "result": "[1, 4, 9]"},
    ]
    code_display_data = [
        {"code": "from IPython.display import HTML, display\ndisplay(HTML('<b>test</b>'))", "mime": "text/html"},
        {"code": "from IPython.display import Math, display\ndisplay(Math('\\\\frac{1}{2}'))", "mime": "text/latex"},
    ]
    code_history_pattern = "1?2*"
    supported_history_operations = ("tail", "range", "search")
    code_inspect_sample = "zip"
    code_clear_output = "from IPython.display import clear_output\nclear_output()"


class MirrorIopubWelcomeTests(jupyter_kernel_test.IopubWelcomeTests):
    kernel_name = "mirror"
    support_iopub_welcome = True


if __name__ == "__main__":
    unittest.main()
