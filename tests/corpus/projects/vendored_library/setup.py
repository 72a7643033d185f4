from setuptools import find_packages, setup

setup(name="policy", packages=find_packages())
