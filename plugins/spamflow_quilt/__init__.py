"""Built-in plugin ``quilt``: Najork's (k, m, c, θ)-quilted pages (SIGIR 2012), found by
mrjob MapReduce jobs that run unchanged inline, locally, on Spark and on Hadoop."""

__version__ = "1.0.0"
