"""The one exception shadergen raises on purpose: bad input or a failed read or write.

Its message is a single line that names the file (and the variant and placeholder where there
is one); shadergen.py prints it and exits with status 1.
"""


class ShaderGenError(Exception):
    pass
