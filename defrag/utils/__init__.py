"""Foundations every room may use: input checks (``validation``), the memory guard
(``memory``), thread budgets (``threads``), fits that stop on Ctrl-C (``interrupt``), exact
sums (``exact``), Dask detection and lazy per-partition maps (``dask_collections``), the
version and build facts (``config``). Nothing here imports another room of the package."""
