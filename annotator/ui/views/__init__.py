"""The page scripts that app.py routes to with st.navigation. Run by Streamlit, never imported.

Deliberately not named `pages/`: Streamlit treats a `pages/` folder beside the entry script as a
legacy multipage app and registers every file in it, so a page could be opened by URL without
going through the role-based navigation."""
