{
  "format" : 1,
  "signatures" : [
    {
      "key_id" : "56475aa75463474c",
      "manifest_sha256" : "cdefe078bba339d4a65d52ee3d675455f2874ce03e919c83f5679715e10bf1c2",
      "signature" : "uKIemoMJ02wcBlPiKPNewBnaIG+p7DV/8lvSuOpM1DFngeIIS2W7sh/HgS1Q0QpL3RB8M0s9elPA4UiD4g9XBw=="
    }
  ]
}
