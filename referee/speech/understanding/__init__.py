"""Understanding: phrase templates, numbers, the intent matcher (words -> intent)."""
