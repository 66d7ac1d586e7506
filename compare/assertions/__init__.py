"""Assertions on comparisons and experiments (lab.assertions does the checking): which apply to a round (the
group's, then its dataset row's), grading each finished answer and storing the results, re-grading stored answers
without a model call, and the pass rates per variant with their paired tests.
"""
