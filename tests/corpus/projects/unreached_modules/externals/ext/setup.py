from setuptools import find_packages, setup

setup(name="extpkg", packages=find_packages())
