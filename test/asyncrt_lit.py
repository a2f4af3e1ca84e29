"""lit test format of the AsyncRT suite (see lit.cfg.py)."""
import re

import lit.formats
import lit.Test


class AsyncrtShTest(lit.formats.ShTest):
    """ShTest that reports tests calling a tool missing from build/bin as
    UNSUPPORTED, naming the tool, instead of running them."""

    def __init__(self, missing_tools):
        # External shell (bash), as the conformance runner uses: RUN lines may
        # use $(...) and other shell syntax.
        super().__init__(execute_external=True)
        self.missing = [
            (tool, re.compile(r"(?<![\w.-])" + re.escape(tool) + r"(?![\w.-])"))
            for tool in missing_tools
        ]

    def execute(self, test, lit_config):
        if self.missing:
            with open(test.getSourcePath(), encoding="utf-8") as f:
                run_lines = [line for line in f if "RUN:" in line]
            for tool, pattern in self.missing:
                if any(pattern.search(line) for line in run_lines):
                    return lit.Test.Result(lit.Test.UNSUPPORTED,
                                           "%s is not built" % tool)
        return super().execute(test, lit_config)
