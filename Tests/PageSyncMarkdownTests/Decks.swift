/// Decks written for these tests in the styles people use: a presenterm deck (front matter,
/// setext slide titles, `<!-- end_slide -->`, comment commands, fenced code holding `---`), a
/// reveal.js markdown deck (slides at `---` lines, a vertical slide at `--`, `***`, notes), a
/// README, and a deck with Windows line ends.
enum Decks {
    static let presenterm = """
        ---
        title: "Introducing _presenterm_"
        sub_title: A terminal slideshow tool
        author: Ann
        ---

        Headers
        ---

        Markdown headers are rendered in a different way.

        # h1
        ## h2
        ### h3

        <!-- end_slide -->

        Code highlighting
        ---

        ```rust
        // a comment
        fn greet() -> &'static str {
            "hi mom"
        }
        ```

        <!-- pause -->

        Some text after a pause.

        <!--end_slide-->

        Column layouts
        ---

        <!-- column_layout: [2, 1] -->

        <!-- column: 0 -->

        Configuration looks like this:

        ```yaml
        ---
        theme: dark
        ---
        ```

        <!-- column: 1 -->

        * one
        * two

        <!-- reset_layout -->

        <!-- speaker_note: remember to breathe -->

        <!-- end_slide -->

        Lists
        ---

        * Item one

          ---

        * Item two
          > quoted
          >
          > ***

        <!-- end_slide -->

        <!-- jump_to_middle -->

        The end
        ---

        """

    /// presenterm's slide titles, in order.
    static let presentermTitles = ["Headers", "Code highlighting", "Column layouts", "Lists", "The end"]

    static let reveal = """
        ---
        title: Reveal deck
        theme: black
        ---

        # Slide one

        Some text.

        ---

        ## Slide two

        ```bash
        echo '
        ---
        '
        ```

        ---

        ## Slide three

        - a list
        - with items

        --

        ### A vertical slide

        Note: speaker notes here.

        ---

        <!-- .slide: data-background="#ff0000" -->
        ## Slide four

        ***

        ## Slide five

        ___

        """

    static let readme = """
        # pagesync

        Keep many terminals on the same page of a document.

        ## Two commands

        Build and run:

        ```sh
        scripts/run-daemon
        ---
        ```

        ## Serving your own documents

        Text.

        ### A subsection

        More text.

        ## Layout

        The end.

        """
}
