from setuptools import find_packages, setup

setup(name="ode-lib", version="0.1", packages=find_packages())
