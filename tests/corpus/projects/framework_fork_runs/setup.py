from setuptools import setup, find_packages

setup(name="detlib", packages=find_packages())
