"""syncllint: find, fix and verify hidden GPU<->CPU synchronizations in PyTorch code.

The lint path (``syncllint.cli`` -> ``config`` -> ``runner`` -> ``engine`` -> ``fixer`` ->
``report``) never imports torch; only ``syncllint.runtime`` and ``syncllint.harness`` do.
"""

__version__ = "0.1.0"
