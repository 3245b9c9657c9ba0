"""Numpy/scipy-only kernels, vectorised over draws and strata."""
