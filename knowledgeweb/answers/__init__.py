"""Composing assistant answers from retrieved evidence.

``AnswerComposer`` is the interface; ``ExtractiveComposer`` is the deterministic
default. An LLM composer can be added beside it without touching callers.
"""

from knowledgeweb.answers.extractive import ExtractiveComposer
from knowledgeweb.answers.protocol import AnswerComposer

__all__ = ["AnswerComposer", "ExtractiveComposer"]
