"""What the benchmark scripts share."""
import platform


def cpu_name() -> str:
    """The CPU's model name (/proc/cpuinfo), for the figures' headers."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
