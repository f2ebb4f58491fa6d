"""Demo tools for the sandox walkthrough: a user tool file, copied into the
sandbox image under its own name and called as demo_tools.<function>."""


def greet(name: str, excited: bool = False) -> dict:
    """Greet someone by name and say who was greeted."""
    message = f"hello {name}" + ("!" if excited else "")
    print(message)
    return {"greeted": name}


def word_count(path: str) -> int:
    """Count the words of a text file in the sandbox's workspace."""
    with open(path, encoding="utf-8") as f:
        return len(f.read().split())
