"""Checks that the packages the chapters need are installed: each is imported by the name the
requirements list gives, at run time."""
from importlib import import_module

REQUIRED = ["torch", "numpy", "tiktoken"]


def main():
    for module_name in REQUIRED:
        try:
            module = import_module(module_name)
        except ImportError:
            print(f"missing: {module_name}")
            continue
        print(module_name, getattr(module, "__version__", "?"))


if __name__ == "__main__":
    main()
