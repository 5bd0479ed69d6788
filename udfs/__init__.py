"""Spark pandas UDFs that wrap `deid_core` for executors.

Empty until the Spark de-identification job (issue 5): the UDFs will load
the dictionary artifact once per executor and the model once per Python
worker, then call the same `deid_core` code the CLI uses.
"""
