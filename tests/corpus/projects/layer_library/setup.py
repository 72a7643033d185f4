from setuptools import find_packages, setup

setup(name="mylib", version="0.1", packages=find_packages())
