"""File roles: what a file is *for* in its repository, from each ecosystem's conventions.

``file_role(path, head)`` is a pure function of the repo-relative path and, optionally,
the first lines of the file (for generated-code markers). It knows conventions, never one
repository's layout:

==============  ===========================================================================
role            recognised by
==============  ===========================================================================
``generated``   vendored trees (``vendor/``, ``third_party/``, ``node_modules/``, ...);
                generated names (``*_pb2.py``, ``*.pb.go``, ``*.generated.*``, ``*.d.ts``
                under ``dist/``); a generated-code marker in the first lines (Go's
                ``Code generated ... DO NOT EDIT.``, ``@generated``, "auto-generated");
                Kotlin's API dumps (``api/okhttp.api``)
``fixture``     test data: ``fixtures/``, ``testdata/``, ``__snapshots__/``, ``*.snap``,
                ``test-data/``; non-code files inside a test folder
``test``        test folders (``test/``, ``tests/``, ``__tests__/``, ``spec/``, ``e2e/``,
                Maven/Gradle ``src/test/``, .NET ``Foo.Tests/``) and test file names of each language
                (``test_*.py``, ``*_test.py``, ``tests.py``, ``conftest.py``, ``*_test.go``,
                ``*_test.cc``/``*_unittest.cc`` even inside a library folder,
                ``*.test.js``/``*.spec.ts``, ``*Test.java``, ``*_spec.rb``, ``tests.rs``, ``*.bats``, ...)
``benchmark``   ``bench/``, ``benches/``, ``benchmark(s)/``, ``*.bench.js``, ``*_bench.*``
``example``     ``example(s)/``, ``sample(s)/``, ``demo(s)/``, ``_examples/``, ``cookbook/``,
                ``playground/``
``changelog``   ``CHANGELOG``, ``CHANGES``, ``HISTORY``, ``NEWS``, ``RELEASE_NOTES``,
                ``RELEASES`` (any extension), ``changelog.d/``, ``.changeset/``,
                ``whatsnew/``, ``release-notes/``
``docs``        documentation formats (Markdown, reStructuredText, AsciiDoc, Org, man pages,
                plain-text prose files such as ``README``/``CONTRIBUTING``/``LICENSE``) and
                documentation folders (``docs/``, ``doc/``, ``documentation/``, ``man/``)
``build``       build and packaging files, maintenance scripts (``scripts/``, ``hack/``,
                ``ci/``, ``fastlane/``), Xcode projects (``Foo.xcodeproj/project.pbxproj``),
                and (``Makefile``, ``CMakeLists.txt``, ``setup.py``,
                ``pyproject.toml``, ``Cargo.toml``, ``go.mod``, ``package.json``,
                ``build.rs``, ``Dockerfile``, ``*.gradle``, ``pom.xml``, ``*.gemspec``, ``*.csproj``,
                ``*.cabal``, ``pubspec.yaml``, ``build.zig``, bundler and test-runner configs
                (``vite.config.ts``, ``jest.config.js``), ``requirements*.txt``, ``build.ps1``,
                ``build.sh``, ``Cartfile``)
``locale``      translation tables: ``locales/``, ``locale/``, ``i18n/``, ``l10n/``,
                ``translations/`` and gettext/XLIFF catalogues (``*.po``, ``*.pot``,
                ``*.xlf``, ``*.xliff``); the messages of one language each, data that
                names every concept of the code in many languages
``config``      tool and CI configuration: dotfiles and dot-folders (``.github/``,
                ``.eslintrc.*``, ``.gitignore``, ``.wallaby.js``), ``tsconfig.json``, ``tox.ini``,
                linter configs (``eslint.config.mjs``), and data files (YAML, TOML, INI, JSON, NEON)
                outside the source tree; a ``.dist`` or ``.sample`` copy has its file's role
``source``      everything else
==============  ===========================================================================

The first rule that applies wins, in the order of the table (build file names are
checked before documentation formats, so ``CMakeLists.txt`` is build): a test inside
``examples/`` is a test, a fixture inside ``tests/`` is a fixture, a Markdown file inside
``examples/`` is an example, a page in ``docs/tutorial/`` is documentation. A folder named like a role counts wherever it sits (``src/test/java``,
``pkg/foo/testdata``), except where the name is also a common source package name and
nothing else says so (``build/`` and ``dist/`` are not roles by themselves: ``src/build/``
is often source).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from pathlib import PurePosixPath

from ..records import ROLES

__all__ = ["ROLES", "ROLES_VERSION", "SOURCE", "file_role", "HEAD_CHARS"]

# Bump when a rule changes: the indexer then re-reads every file (vectors are reused).
# 2: a test_*/*_test name of a language whose tests live in their own folder does not make a
#    file inside a library folder a test (lib/bats-core/test_functions.bash is library code).
# 3: translation tables (locales/, i18n/, *.po, ...) are the ``locale`` role, not source.
# 4: a C or C++ ``*_test.cc`` / ``*_unittest.cc`` is a test wherever it sits (GoogleTest's
#    convention: abseil's absl/strings/internal/, protobuf's src/google/protobuf/); a .NET test
#    project's folder (``Foo.Tests/``, ``Foo.UnitTests/``) holds tests; a Bats file (``*.bats``)
#    is a test, not a fixture of its test/ folder.
# 5: a Gradle/Maven test source set is ``src/test`` or a camelCase ``src/fooTest``, not any folder
#    after src/ ending in "test" (pytest's ``src/_pytest/`` is its code); under ``src/main/`` a
#    file name never makes a test (``TestFactory.java`` in JUnit's API).
# 6: a ``.dist`` or ``.sample`` copy of a file has that file's role (``phpunit.xml.dist`` is
#    config); NEON (``phpstan.neon``, ``phpstan-baseline.neon``) is a data format; package specs
#    of other ecosystems are build files (``*.gemspec``, ``*.podspec``, ``*.nuspec``, ``*.cabal``,
#    ``*.opam``, ``*.rockspec``, MSBuild projects, ``pubspec.yaml``, ``build.zig``, ``Pipfile``, the
#    Gradle and Maven wrappers); a tool's ``<tool>.config.{js,ts,...}`` is that tool's file
#    wherever it sits (``vitest.config.ts`` and ``webpack.config.mjs`` build, ``eslint.config.js``
#    config), not source.
# 7: Xcode project bundles (``Foo.xcodeproj/project.pbxproj``, ``*.xcscheme``, ``*.xcconfig``),
#    fastlane and AppVeyor folders, Carthage/CocoaPods/Cake files and ``build.{sh,ps1,cmd}`` are
#    build files; Kotlin's binary-compatibility dumps (``api/okhttp.api``) are generated.
ROLES_VERSION = 7
SOURCE = "source"

_GENERATED_DIRS = frozenset({"vendor", "vendored", "third_party", "thirdparty", "third-party",
                             "node_modules", "bower_components", "_vendor", "external", "deps"})
_FIXTURE_DIRS = frozenset({"fixtures", "fixture", "__fixtures__", "testdata", "test-data", "test_data",
                           "__snapshots__", "snapshots", "golden", "goldens", "testfiles"})
_TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "e2e", "integration-tests",
                        "integration_tests", "unittests", "unit_tests", "testsuite", "test-suite",
                        "__mocks__", "cypress", "t"})
_BENCH_DIRS = frozenset({"bench", "benches", "benchmark", "benchmarks", "perf", "_bench", "benchmarking"})
_EXAMPLE_DIRS = frozenset({"example", "examples", "_examples", "sample", "samples", "demo", "demos",
                           "cookbook", "playground"})
_CHANGELOG_DIRS = frozenset({"changelog.d", ".changeset", ".changesets", "changes", "whatsnew",
                             "release-notes", "release_notes", "changelogs", "newsfragments"})
# Maintenance scripts and CI helpers: the nearest role is build (not the product's code).
_BUILD_DIRS = frozenset({"scripts", "script", "hack", "ci", ".ci", "tasks", "_appveyor", "appveyor", "fastlane"})
# Xcode's project bundles (``Foo.xcodeproj/project.pbxproj``, ``Foo.xcworkspace/contents.xcworkspacedata``).
_BUILD_DIR_SUFFIXES = (".xcodeproj", ".xcworkspace")
_DOC_DIRS = frozenset({"docs", "doc", "documentation", "man", "_docs", "site-docs", "wiki"})

_CHANGELOG_NAME = re.compile(
    r"^(change[-_ ]?log|changes|history|news|release[-_ ]?notes|releases|whats[-_ ]?new)(\b|[-_.]|$)",
    re.IGNORECASE)
_DOC_EXT = frozenset({".md", ".markdown", ".mdx", ".rst", ".adoc", ".asciidoc", ".org", ".txt", ".rdoc",
                      ".pod", ".tex", ".texi", ".1", ".3", ".5", ".7", ".8", ".man"})
_DOC_NAMES = re.compile(
    r"^(readme|contributing|code[-_]of[-_]conduct|license|licence|copying|authors|contributors|"
    r"maintainers|security|support|governance|notice|patents|credits|thanks|faq|install|usage|"
    r"upgrading|migration|migrating|roadmap|todo)(\b|[-_.]|$)", re.IGNORECASE)
_LOCALE_DIRS = frozenset({"locales", "locale", "i18n", "l10n", "translations", "localization", "localizations",
                          "localisation", "localisations"})
_LOCALE_EXT = frozenset({".po", ".pot", ".xlf", ".xliff"})
_CODE_EXT = frozenset({
    ".py", ".pyi", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts", ".go", ".rs", ".java",
    ".kt", ".kts", ".scala", ".rb", ".php", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cs",
    ".swift", ".m", ".mm", ".lua", ".pl", ".pm", ".sh", ".bash", ".zsh", ".fish", ".ex", ".exs", ".erl",
    ".hs", ".ml", ".mli", ".clj", ".cljs", ".dart", ".zig", ".nim", ".jl", ".r", ".vue", ".svelte",
    ".elm", ".fs", ".fsx", ".groovy", ".ps1", ".sql", ".v", ".sv", ".vhd", ".f90", ".d", ".cr", ".hx", ".t",
    ".bats",
})
_DATA_EXT = frozenset({".json", ".json5", ".jsonc", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf",
                       ".properties", ".xml", ".plist", ".env", ".editorconfig", ".neon"})
# A copy of a file to start one's own from (``phpunit.xml.dist``, ``config.yml.sample``): the role
# is the file's.
_COPY_SUFFIXES = frozenset({".dist", ".sample"})
# Test file names, by language family: a name pattern only counts for the extensions
# whose ecosystems use it (``test_*`` is a Python/C/Ruby habit, not Go's: there only
# ``*_test.go`` is a test).
_TEST_NAME = re.compile(
    r"(^test_.+\.(py|pyi|c|cc|cpp|cxx|h|hpp|rb|rs|sh|bash|pl|lua|ex|exs|erl|nim|jl|r|zig|cr)$)|"
    r"(^.+_tests?\.(py|c|cc|cpp|cxx|rb|rs|go|sh|lua|ex|exs|erl|dart|nim|jl|r|zig|cr|ml|hs)$)|"
    r"(^conftest\.py$)|(^tests?\.rs$)|(^tests\.py$)|"
    r"(^.+[._-](test|spec|tests|specs)\.[cm]?[jt]sx?$)|(^.+\.(test|spec)\.\w+$)|"
    r"(^.+(Test|Tests|Spec|IT)\.(java|kt|kts|scala|groovy|cs|swift|php|m|mm)$)|(^.+_spec\.rb$)|"
    r"(^Test[A-Z].*\.(java|kt|cs|swift|php)$)|(^.+\.t$)|(^.+\.bats$)")
# Languages whose tests live in a folder of their own (test/, spec/, t/): there a test_*/*_test
# file name inside a library folder is a library file that happens to say "test"
# (``lib/bats-core/test_functions.bash``, ``src/unity/test_runner.c``).
_SEPARATE_TEST_EXT = frozenset({".sh", ".bash", ".zsh", ".lua", ".ex", ".exs", ".erl", ".c", ".cc", ".cpp", ".cxx",
                                ".h", ".hpp", ".rb", ".pl", ".nim", ".jl", ".r", ".cr"})
# C and C++ tests named by suffix sit beside the code they test, in library folders too
# (GoogleTest: ``absl/strings/internal/str_format/arg_test.cc``, ``src/google/protobuf/arena_unittest.cc``);
# only the ``test_*`` prefix form inside one is library code (``src/unity/test_runner.c``).
_C_TEST_SUFFIX = re.compile(r"^.+_(?:unit)?tests?\.(?:c|cc|cpp|cxx|h|hpp)$")
# .NET test projects: a folder named after the project it tests (``MessagePack.Tests/``,
# ``Newtonsoft.Json.UnitTests/``, ``Foo.IntegrationTests/``, ``Bar.Specs/``); every file in it is test code.
_TEST_PROJECT = re.compile(r"\.(?:unit|integration|functional|acceptance)?(?:tests?|specs?)$")
_LIBRARY_DIRS = frozenset({"lib", "libs", "src", "source", "pkg", "include", "internal", "core"})
_BENCH_NAME = re.compile(r"(^.+[._-]bench(mark)?s?\.\w+$)|(^bench(mark)?s?_.+\.\w+$)", re.IGNORECASE)
_GENERATED_NAME = re.compile(
    r"(_pb2(_grpc)?\.pyi?$)|(\.pb(\.gw)?\.go$)|(\.pb\.(h|cc)$)|([._]generated\.\w+$)|(\.g\.dart$)|"
    r"(\.freezed\.dart$)|(_generated\.\w+$)|(\.designer\.cs$)|(^zz_generated.*\.go$)|(\.gen\.\w+$)")
_BUILD_NAMES = frozenset({
    "makefile", "gnumakefile", "cmakelists.txt", "setup.py", "setup.cfg", "pyproject.toml", "cargo.toml",
    "go.mod", "go.work", "package.json", "build.rs", "dockerfile", "containerfile", "build.gradle",
    "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "pom.xml", "build.xml", "meson.build",
    "justfile", "rakefile", "gemfile", "noxfile.py", "fabfile.py", "gulpfile.js", "gruntfile.js",
    "webpack.config.js", "rollup.config.js", "rollup.config.mjs", "vite.config.js", "vite.config.ts",
    "esbuild.config.js", "babel.config.js", "karma.conf.js", "jest.config.js", "jest.config.ts",
    "manifest.in", "build.sbt", "project.clj", "mix.exs", "rebar.config", "bazel", "workspace",
    "build.bazel", "buck", "sconstruct", "configure.ac", "configure", "vcpkg.json", "conanfile.py",
    "podfile", "package.swift", "composer.json", "deno.json", "bunfig.toml", "flake.nix", "default.nix",
    "docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml", "lerna.json",
    "pnpm-workspace.yaml", "nx.json", "turbo.json", "tsup.config.ts", "cargo.lock", "pubspec.yaml",
    "build.zig", "build.zig.zon", "directory.build.props", "directory.build.targets", "deps.edn",
    "stack.yaml", "dune-project", "shard.yml", "pipfile", "gradlew", "gradlew.bat", "mvnw", "mvnw.cmd",
    "cartfile", "cartfile.resolved", "podfile.lock", "brewfile", "mintfile", "dangerfile", "build.ps1",
    "build.sh", "build.cmd", "build.bat", "build.cake", "psakefile.ps1",
})
_BUILD_EXT = frozenset({".mk", ".cmake", ".gradle", ".bzl", ".nix", ".dockerfile", ".gemspec", ".podspec",
                        ".nuspec", ".cabal", ".opam", ".rockspec", ".csproj", ".fsproj", ".vbproj", ".sln",
                        ".props", ".targets", ".pbxproj", ".xcscheme", ".xcworkspacedata", ".xcconfig",
                        ".cake"})
# ``<tool>.config.<ext>``: a build or test tool's configuration, written as code.
_TOOL_CONFIG = re.compile(
    r"^(?:(vitest|vite|jest|karma|playwright|cypress|webpack|rollup|esbuild|tsup|tsdown|babel|postcss|"
    r"tailwind|svelte|astro|next|nuxt|vue|wdio|rspack|rsbuild|unbuild|size-limit)|"
    r"(eslint|prettier|stylelint|commitlint|lint-staged|release|semantic-release|knip|typedoc))"
    r"(?:\.[\w-]+)?\.config(?:\.[\w-]+)?\.(?:[cm]?[jt]s|json)$", re.IGNORECASE)
_CONFIG_NAMES = frozenset({
    "tox.ini", "pytest.ini", "mypy.ini", ".coveragerc", "tsconfig.json", "jsconfig.json", "tslint.json",
    "renovate.json", "codecov.yml", "codecov.yaml", "appveyor.yml", ".travis.yml", "netlify.toml",
    "vercel.json", "rustfmt.toml", "clippy.toml", "deny.toml", "typos.toml", "committed.toml",
    "release.toml", "dependabot.yml", "readthedocs.yml", ".readthedocs.yml", "crowdin.yml",
})
_GENERATED_MARK = re.compile(
    r"(@generated\b)|(\b(code|file) (is |was |has been )?(auto-?)?generated\b.{0,160}?"
    r"\b(do not|don't|must not|should not|never) (be )?(edit|modif|change))|"
    r"(\b(this|the) (file|code) (is|was|has been) (automatically |auto-?)?generated\b)|"
    r"(\bauto-?generated (file|code)\b)|(\bgenerated by\b.{0,100}?\b(do not|don't) (edit|modify))",
    re.IGNORECASE | re.DOTALL)
# A JVM library's public API as dumped by Kotlin's binary-compatibility validator (``api/okhttp.api``:
# ``public final class okhttp3/Address {``, class names with slashes); not go-zero's ``.api`` sources.
_API_DUMP = re.compile(r"^(?:public|protected) (?:[a-z]+ )*?(?:class|interface|enum|annotation) [\w$]+/")
HEAD_CHARS = 1500  # how much of a file's start the generated-code marker is looked for in


def _dirs(parts: tuple[str, ...]) -> list[str]:
    return [p.lower() for p in parts[:-1]]


def file_role(path: str, head: str = "") -> str:
    """The role of the repo-relative ``path`` (forward slashes); ``head``: the file's first
    characters, if known (a generated-code marker there makes it ``generated``)."""
    p = PurePosixPath(path)
    if p.suffix.lower() in _COPY_SUFFIXES and p.stem and "." in p.stem.lstrip("."):
        p = p.with_suffix("")
    parts = p.parts
    name = p.name
    lname = name.lower()
    suffix = p.suffix.lower()
    dirs = _dirs(parts)
    dirset = set(dirs)
    code = suffix in _CODE_EXT
    if dirset & _GENERATED_DIRS or _GENERATED_NAME.search(name) or (
            dirs[:1] == ["dist"] and code) or (
            suffix == ".api" and _API_DUMP.match(head)):
        return "generated"
    if head and code and _GENERATED_MARK.search(head[:HEAD_CHARS]):
        return "generated"
    if dirset & _FIXTURE_DIRS or suffix == ".snap":
        return "fixture"
    in_test_dir = bool(dirset & _TEST_DIRS) or _maven_test(parts[:-1]) or any(_TEST_PROJECT.search(d) for d in dirs)
    if in_test_dir and not code and suffix not in (".md", ".rst") and lname not in _BUILD_NAMES:
        return "fixture"  # data beside the tests: expected outputs, inputs
    if in_test_dir or (code and _C_TEST_SUFFIX.match(name)) or (code and _TEST_NAME.search(name) and not (
            suffix in _SEPARATE_TEST_EXT and dirset & _LIBRARY_DIRS and not lname.endswith(("_spec.rb", "_spec.lua")))
            and not _maven_main(dirs)):
        return "test"
    if dirset & _BENCH_DIRS or (code and _BENCH_NAME.search(name)):
        return "benchmark"
    if dirset & _EXAMPLE_DIRS:
        return "example"
    if dirset & _CHANGELOG_DIRS or (not code and _CHANGELOG_NAME.match(name)):
        return "changelog"
    tool = _TOOL_CONFIG.match(name)
    if tool:
        return "build" if tool.group(1) else "config"
    if lname in _BUILD_NAMES or suffix in _BUILD_EXT or lname.startswith("dockerfile") or (
            suffix in (".txt", ".in") and (lname.startswith("requirements") or "requirements" in dirset)) or (
            dirset & _BUILD_DIRS) or any(d.endswith(_BUILD_DIR_SUFFIXES) for d in dirs):
        return "build"
    if dirset & _DOC_DIRS or suffix in _DOC_EXT or (not suffix and _DOC_NAMES.match(name)):
        return "docs"
    if dirset & _LOCALE_DIRS or suffix in _LOCALE_EXT:
        return "locale"
    if lname in _CONFIG_NAMES or any(d.startswith(".") for d in dirs) or name.startswith("."):
        return "config"
    if suffix in _DATA_EXT and not _under_source_tree(dirs):
        return "config"
    return SOURCE


# A Gradle/Maven test source set: ``src/test``, ``src/androidTest``, ``src/integrationTest``,
# ``src/commonTest`` (Kotlin Multiplatform), ``src/testFixtures``: "test" or a camelCase name ending
# in Test(s); not a package that happens to end in "test" (pytest's ``src/_pytest/``, ``src/latest/``).
_SOURCE_SET_TEST = re.compile(r"^(?:tests?|[a-z][A-Za-z0-9]*Tests?|testFixtures)$")


def _maven_test(folders: Sequence[str]) -> bool:
    """``src/test/...``, ``src/androidTest/...``, ``src/integrationTest/...`` (Gradle/Maven;
    ``folders`` as written: the case tells a source set from a package name)."""
    return any(a.lower() == "src" and _SOURCE_SET_TEST.match(b) for a, b in pairwise(folders))


def _maven_main(dirs: list[str]) -> bool:
    """``src/main/...``: a Gradle/Maven main source set, where no file is a test whatever its
    name (tests live in ``src/test``; ``TestUtils.java`` or ``TestFactory.java`` there is
    the library's own code: JUnit's, a testing library's)."""
    return any(a == "src" and b == "main" for a, b in pairwise(dirs))


def _under_source_tree(dirs: list[str]) -> bool:
    """A data file inside a source package (``src/pkg/schema.json``) is part of the code."""
    return bool(dirs) and dirs[0] in ("src", "lib", "pkg", "internal", "app", "source", "crates", "packages")
