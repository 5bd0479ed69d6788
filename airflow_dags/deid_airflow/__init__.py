"""Shared pieces of the DAG files: validated settings, alert callbacks and the Spark task factory.

Imported by the DAGs in Airflow's own virtualenv, so it needs nothing of
the project's (no pyspark, no TensorFlow): the jobs themselves run in the
project's interpreter through spark-submit or a shell command.
"""
