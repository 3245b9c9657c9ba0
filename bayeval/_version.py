"""The package's version, in a module of its own so that no library module imports the façade."""

__version__ = "0.1.0"
