"""``syncllint verify``: run every rule page's examples on a GPU (or the CPU emulation) and check their claims."""
