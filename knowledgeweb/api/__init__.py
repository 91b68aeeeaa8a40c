"""The project's HTTP API: one NinjaAPI that mounts each area's router."""
