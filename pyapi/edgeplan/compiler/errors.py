"""Compile errors: every problem found in a model, gathered before raising, each naming its node."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Problem:
    node: Optional[str]        # ONNX node name, or None for a model-level problem
    op_type: Optional[str]
    message: str
    length: Optional[str] = None   # the data-dependent length whose maximum the problem asks to declare

    def __str__(self) -> str:
        if self.node is None:
            return self.message
        return f"node '{self.node}' ({self.op_type}): {self.message}"


class CompileError(Exception):
    """Raised with the list of all problems that prevent compiling a model."""

    def __init__(self, problems):
        self.problems = list(problems)
        n = len(self.problems)
        head = "cannot compile the model: " + ("1 problem" if n == 1 else f"{n} problems")
        super().__init__(head + "".join("\n  - " + str(p) for p in self.problems))


class Problems(list):
    """A list of Problem with helpers; raise_if_any() raises one CompileError for all of them."""

    def add(self, node, message: str, length: Optional[str] = None) -> None:
        if node is None:
            self.append(Problem(None, None, message, length))
        else:
            p = Problem(node.name, node.op_type, message, length)
            if p not in self:
                self.append(p)

    def raise_if_any(self) -> None:
        if self:
            raise CompileError(self)
