"""knowledgeweb: review AI answers that cite retrieved knowledge."""
