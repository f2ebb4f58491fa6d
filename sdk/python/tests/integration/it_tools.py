"""A tool module of the integration tests, passed to the SDK as a function
(it_tools.shout): the SDK copies this file into the sandbox."""


def shout(text: str, times: int = 1) -> str:
    """Shouts the text, times times."""
    return (text.upper() + "!") * times


def whisper(text: str) -> str:
    """Whispers the text."""
    return text.lower() + "..."
