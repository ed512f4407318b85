"""Small readers the benchmark reports share: a ratio that is 0 without a
denominator, the first number of a text (0 if none), and a file's text
("" if it cannot be read), so that a run that wrote nothing reports zeros
instead of failing the report."""


def div(a, b):
    return a / b if b else 0.0


def first_float(text):
    try:
        return float(text.split()[0])
    except (IndexError, ValueError):
        return 0.0


def read_text(path):
    try:
        return path.read_text()
    except OSError:
        return ""
