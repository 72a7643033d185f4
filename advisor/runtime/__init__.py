"""`advisor check --measure`: short synthetic experiments that confirm findings at runtime.

Nothing here imports torch at module level: the registry names each probe by a
"module:function" string, and only the child process that runs a probe imports torch.
`measure_findings` (advisor.runtime.measure) is the entry point the CLI uses.

- registry.py: the probes, keyed by rule code, with their default parameters
- site.py: what the static analysis knows about a finding's site (literal batch size, ...)
- probes_cpu.py / probes_cuda.py: the experiments
- child.py: runs one probe in a child process (`python -m advisor.runtime.child CODE PARAMS`)
- results.py: the result cache, keyed by device, torch version, probe and parameters
- device.py: GPU name, torch and CUDA versions
- figures.py: figures recorded by running the probes (figures.json), shown on the rule pages
"""
