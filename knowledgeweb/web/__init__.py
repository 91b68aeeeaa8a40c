"""web app."""
