"""tconv.Error: every failure of the package, with the library's message."""
import re

_NODE = re.compile(r"node '((?:[^'\\]|\\.)*)'")
_FIELD = re.compile(r"\b(?:attribute|input|output|field|tensor|initializer) '((?:[^'\\]|\\.)*)'")


class Error(Exception):
    """A failure of tconv: `message` is the library's (naming the file, node and field where they
    apply); `status` the library's status name ("usage", "io", "parse", "invalid",
    "unsupported", "limit", "nomem", "mismatch"); `node` and `field` the first node and the first
    attribute, input, output or tensor the message names (None when it names none), or the node
    the caller gives."""

    def __init__(self, message, status="usage", node=None):
        super().__init__(message)
        self.message = message
        self.status = status
        m = _NODE.search(message)
        self.node = node if node is not None else m.group(1) if m else None
        m = _FIELD.search(message)
        self.field = m.group(1) if m else None


class CheckFailed(Error):
    """legalize(check=N) found a rewrite whose result differs from the original's: `report` is
    the report, with the proof that says where (tconv-import --check's exit 1)."""

    def __init__(self, message, report):
        super().__init__(message, "mismatch")
        self.report = report
