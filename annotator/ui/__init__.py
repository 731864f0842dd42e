"""The Streamlit app: `app.py` routes by role, `pages/` are thin, `components.py` holds shared
widgets and `i18n.py` the UI strings. The only package that imports Streamlit."""
