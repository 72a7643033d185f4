from setuptools import find_packages, setup

setup(name="prefix_lib", packages=find_packages())
