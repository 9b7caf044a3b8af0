"""Evaluators and hints over board_rules' public API: the teacher's evaluator, the learned per-game nets
and the explanations of a play.

Imports ``board_rules`` and numpy (and the optional ``gnubg_nn``, lazily); nothing of the referee's.
Nets are loaded on first use.
"""
