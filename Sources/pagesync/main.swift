print("pagesync")
