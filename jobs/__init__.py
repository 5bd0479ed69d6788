"""Batch jobs and command-line entry points (sample generation, Spark runs)."""
